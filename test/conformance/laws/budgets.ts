// Spend budgets (ADR 0016): a commit's cost adds to the session's committed cost exactly once
// (a replayed stamp or a refused commit adds nothing), and a tenant's spend is a counter per
// window that concurrent charges never lose. Session cost runs on every backend; tenant spend on
// memory, Redis and Cluster (it is the server's own policy, not a LeaseService operation).
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import { usage } from "../../../src/domain/usage.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import type { TenantBudgetStore } from "../../../src/ports/budget-guard.js";
import { expectTetherError, violationFields } from "../support/expectations.js";
import { commitDraft, freshSessionId } from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

function tenantSpendOf(store: RuntimeStore): TenantBudgetStore {
  const budgets = store as RuntimeStore & Partial<TenantBudgetStore>;
  if (typeof budgets.chargeTenantSpend !== "function") {
    throw new Error("this backend keeps no tenant spend");
  }
  return budgets as TenantBudgetStore;
}

const freshTenant = () => `t-${randomUUID().slice(0, 8)}`;

export function describeBudgetLaws(factory: StoreFactory, options: { tenantSpend: boolean }): void {
  describe("budgets: committed session cost", () => {
    const harness = useStoreHarness(factory);

    test("a commit's cost adds to the session's committed cost", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { usage: usage({ inputTokens: 10 }) }));
      expect((await store.loadSession(sid))?.costMicros).toBeUndefined();
      await store.commit(commitDraft(sid, 1, { costMicros: 120, advanceTurn: true }));
      await store.commit(
        commitDraft(sid, 2, { usage: usage({ outputTokens: 4 }), costMicros: 30 }),
      );
      await store.commit(commitDraft(sid, 3, { metadataPatch: { k: "v" } }));
      const snapshot = await store.loadSession(sid);
      expect(snapshot?.costMicros).toBe(150);
      expect(snapshot?.usage).toEqual(usage({ inputTokens: 10, outputTokens: 4 }));
    });

    test("a session's summary shows its committed cost beside its usage", async () => {
      const { store } = harness();
      const [priced, free] = [freshSessionId(), freshSessionId()];
      await store.commit(
        commitDraft(priced, 0, { usage: usage({ inputTokens: 3 }), costMicros: 77 }),
      );
      await store.commit(commitDraft(free, 0, { usage: usage({ inputTokens: 3 }) }));
      const summaries = await store.readSessionSummaries([priced, free]);
      const byId = new Map(summaries.map((s) => [s.sessionId, s]));
      expect(byId.get(priced)?.costMicros).toBe(77);
      expect(byId.get(priced)?.usage).toEqual(usage({ inputTokens: 3 }));
      expect(byId.get(free)?.costMicros).toBeUndefined();
    });

    test("a replayed stamp does not add its cost again", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const stamp = { operationId: "turn:t1", contentHash: "h1" };
      const first = await store.commit(commitDraft(sid, 0, { costMicros: 50, stamp }));
      const again = await store.commit(commitDraft(sid, 0, { costMicros: 50, stamp }));
      expect(again).toEqual({ ...first, replayed: true });
      expect((await store.loadSession(sid))?.costMicros).toBe(50);
    });

    test("a commit refused by the head CAS adds no cost", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { costMicros: 5 }));
      await expectTetherError(
        () => store.commit(commitDraft(sid, 0, { costMicros: 900 })),
        "head_revision_conflict",
      );
      expect((await store.loadSession(sid))?.costMicros).toBe(5);
    });

    test("a negative or fractional cost is invalid_argument naming cost_micros", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      for (const costMicros of [-1, 2.5]) {
        const error = await expectTetherError(
          () => store.commit(commitDraft(sid, 0, { costMicros })),
          "invalid_argument",
        );
        expect(violationFields(error)).toEqual(["cost_micros"]);
      }
      expect(await store.loadSession(sid)).toBeUndefined();
    });
  });

  if (!options.tenantSpend) return;

  describe("budgets: tenant spend", () => {
    const harness = useStoreHarness(factory);

    test("a charge adds to its window and answers the new total; 0 only reads", async () => {
      const spend = tenantSpendOf(harness().store);
      const tenant = freshTenant();
      expect(await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 0 })).toBe(0);
      expect(await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 100 })).toBe(100);
      expect(await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 250 })).toBe(350);
      expect(await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 0 })).toBe(350);
    });

    test("each tenant and each window is its own counter", async () => {
      const spend = tenantSpendOf(harness().store);
      const [a, b] = [freshTenant(), freshTenant()];
      await spend.chargeTenantSpend({ tenant: a, window: "2026-01-01", costMicros: 7 });
      await spend.chargeTenantSpend({ tenant: a, window: "2026-01-02", costMicros: 11 });
      await spend.chargeTenantSpend({ tenant: b, window: "2026-01-01", costMicros: 13 });
      const read = (tenant: string, window: string) =>
        spend.chargeTenantSpend({ tenant, window, costMicros: 0 });
      expect(await read(a, "2026-01-01")).toBe(7);
      expect(await read(a, "2026-01-02")).toBe(11);
      expect(await read(b, "2026-01-01")).toBe(13);
      expect(await read(b, "total")).toBe(0);
    });

    test("concurrent charges all land: none is lost to a race", async () => {
      const spend = tenantSpendOf(harness().store);
      const tenant = freshTenant();
      const totals = await Promise.all(
        Array.from({ length: 20 }, () =>
          spend.chargeTenantSpend({ tenant, window: "total", costMicros: 7 }),
        ),
      );
      // Each charge saw a distinct total: the counter moved through every step of 7.
      expect([...totals].sort((x, y) => x - y)).toEqual(
        Array.from({ length: 20 }, (_, i) => 7 * (i + 1)),
      );
      expect(await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 0 })).toBe(140);
    });

    test("bad input is invalid_argument naming the field, and charges nothing", async () => {
      const spend = tenantSpendOf(harness().store);
      const tenant = freshTenant();
      const cases: [Parameters<TenantBudgetStore["chargeTenantSpend"]>[0], string][] = [
        [{ tenant, window: "total", costMicros: -3 }, "cost_micros"],
        [{ tenant, window: "total", costMicros: 1.5 }, "cost_micros"],
        [{ tenant, window: "total", costMicros: 2 ** 53 }, "cost_micros"],
        [{ tenant: "has space", window: "total", costMicros: 1 }, "tenant"],
        [{ tenant: "", window: "total", costMicros: 1 }, "tenant"],
        [{ tenant, window: "yesterday", costMicros: 1 }, "window"],
      ];
      for (const [charge, field] of cases) {
        const error = await expectTetherError(
          () => spend.chargeTenantSpend(charge),
          "invalid_argument",
        );
        expect(violationFields(error)).toEqual([field]);
      }
      expect(await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 0 })).toBe(0);
    });
  });
}
