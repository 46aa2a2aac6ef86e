// A commit's tenant charges (ADR 0038): where the store says its commit step reaches the quota
// and spend ports (chargesInCommit), a commit carrying a slot release, tokens and a cost leaves
// the tenant's counters exactly as releaseTurnSlot, countTokens and chargeTenantSpend would; a
// commit that does not apply (refused, replayed) applies none of them. Where the store does not
// offer it (Cluster: the tenant's keys sit in another slot), it says so, and the runtime keeps
// the separate steps. Runs on memory, Redis (standalone, replicated) and Cluster.
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { TenantQuota } from "../../../src/domain/quotas.js";
import type { TenantBudgetStore } from "../../../src/ports/budget-guard.js";
import type { QuotaStore } from "../../../src/ports/quota-store.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { expectTetherError } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";
import { turnIdOfInput } from "../../../src/ports/turn-ids.js";

const freshTenant = (): string => `t-${randomUUID().slice(0, 8)}`;
const LIMITS: TenantQuota = {
  concurrent_turns: { max: 10, mode: "queue" },
  tokens_per_day: { max: 1_000_000, mode: "queue" },
};
/** How close to a minute's end a law waits the window out (its counters restart there). */
const WINDOW_EDGE_MS = 5_000;

function spendOf(store: RuntimeStore): TenantBudgetStore {
  const spend = store as RuntimeStore & Partial<TenantBudgetStore>;
  if (typeof spend.chargeTenantSpend !== "function") throw new Error("no tenant spend");
  return spend as TenantBudgetStore;
}

export function describeTenantChargeLaws(
  factory: StoreFactory,
  offered: boolean,
  options: { turnStart: boolean },
): void {
  describe("tenant charges in the commit's step", () => {
    // A law of the fused steps exists only where the backend offers them: elsewhere it is not
    // defined at all (the "does not offer" law covers those backends), rather than skipped.
    const lawWhere = (holds: boolean) =>
      holds ? (name: string, fn: () => Promise<void>) => test(name, fn) : () => undefined;
    const harness = useStoreHarness(factory);
    const ports = (): { store: RuntimeStore; quotas: QuotaStore; spend: TenantBudgetStore } => {
      const { store, quotas } = harness();
      if (!quotas) throw new Error("this backend's harness has no quota store");
      return { store, quotas, spend: spendOf(store) };
    };
    /** The tenant's counters as the separate steps' readers see them. */
    const counters = async (tenant: string) => {
      const { quotas, spend } = ports();
      const usage = await quotas.readQuotaUsage(tenant);
      return {
        running: usage.runningTurns,
        tokensToday: usage.tokensToday,
        spent: await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 0 }),
      };
    };
    const inOneWindow = async (): Promise<void> => {
      const usage = await ports().quotas.readQuotaUsage(freshTenant());
      const left = usage.minuteResetAtMs - usage.nowMs;
      if (left < WINDOW_EDGE_MS) await harness().advanceTime(left);
    };

    test(`the store ${offered ? "offers" : "does not offer"} charges in its commit for its own quota and spend ports`, () => {
      const { store, quotas, spend } = ports();
      expect(store.chargesInCommit?.({ quotas, spend }) === true).toBe(offered);
      expect(store.chargesInCommit?.({ quotas }) === true).toBe(offered);
      // Nothing to carry: nothing offered.
      expect(store.chargesInCommit?.({}) === true).toBe(false);
    });

    lawWhere(offered)(
      "a commit's slot release, tokens and cost equal the separate steps'",
      async () => {
        await inOneWindow();
        const { store, quotas, spend } = ports();
        const [fused, separate] = [freshTenant(), freshTenant()];
        for (const tenant of [fused, separate]) {
          await quotas.admitTurn({
            tenant,
            holder: "s/t1",
            limits: LIMITS,
            slotTtlMs: LONG_TTL_MS,
          });
          await quotas.admitTurn({
            tenant,
            holder: "s/t2",
            limits: LIMITS,
            slotTtlMs: LONG_TTL_MS,
          });
          await quotas.countTokens(tenant, 5);
          await spend.chargeTenantSpend({ tenant, window: "total", costMicros: 11 });
        }
        await store.commit(
          commitDraft(freshSessionId(), 0, {
            tenantCharges: {
              tenant: fused,
              releaseSlot: "s/t1",
              quotaTokens: 40,
              spend: { window: "total", costMicros: 300 },
            },
          }),
        );
        expect(await quotas.releaseTurnSlot(separate, "s/t1")).toBe(true);
        await quotas.countTokens(separate, 40);
        await spend.chargeTenantSpend({ tenant: separate, window: "total", costMicros: 300 });
        const after = await counters(fused);
        expect(after).toEqual(await counters(separate));
        expect(after).toEqual({ running: 1, tokensToday: 45, spent: 311 });
        // The released slot is gone: releasing it the separate way finds nothing.
        expect(await quotas.releaseTurnSlot(fused, "s/t1")).toBe(false);
      },
    );

    lawWhere(offered)(
      "a commit that does not apply (head conflict, replayed stamp) applies none of its charges",
      async () => {
        await inOneWindow();
        const { store, quotas } = ports();
        const tenant = freshTenant();
        await quotas.admitTurn({ tenant, holder: "s/t1", limits: LIMITS, slotTtlMs: LONG_TTL_MS });
        const sid = freshSessionId();
        const stamp = { operationId: "turn:t1", contentHash: "h1" };
        const charges = {
          tenant,
          releaseSlot: "s/t1",
          quotaTokens: 9,
          spend: { window: "total", costMicros: 70 },
        };
        await expectTetherError(
          () => store.commit(commitDraft(sid, 3, { tenantCharges: charges })),
          "head_revision_conflict",
        );
        expect(await counters(tenant)).toEqual({ running: 1, tokensToday: 0, spent: 0 });
        await store.commit(commitDraft(sid, 0, { stamp }));
        const replay = await store.commit(commitDraft(sid, 0, { stamp, tenantCharges: charges }));
        expect(replay.replayed).toBe(true);
        expect(await counters(tenant)).toEqual({ running: 1, tokensToday: 0, spent: 0 });
      },
    );

    lawWhere(options.turnStart)(
      `a turn start ${offered ? "reads" : "does not read"} the tenant's spend in its step where the commit carries charges`,
      async () => {
        const { store, spend } = ports();
        const start = store.startTurn?.bind(store);
        if (!start) throw new Error("this backend has no startTurn");
        const tenant = freshTenant();
        await spend.chargeTenantSpend({ tenant, window: "2026-12-07", costMicros: 42 });
        const claim = {
          owner: opaqueOwner("a"),
          ttlMs: LONG_TTL_MS,
          maxInputs: 1,
          tenantSpend: { tenant, window: "2026-12-07" },
        };
        const started = await start(inputDraft(freshSessionId(), "hello"), claim);
        expect(started.started?.tenantSpend).toEqual(
          offered ? { window: "2026-12-07", spent: 42 } : undefined,
        );
        // A window with nothing spent reads 0, as chargeTenantSpend with 0 answers it.
        const other = await start(inputDraft(freshSessionId(), "hello"), {
          ...claim,
          tenantSpend: { tenant, window: "total" },
        });
        expect(other.started?.tenantSpend).toEqual(
          offered ? { window: "total", spent: 0 } : undefined,
        );
        // A start that takes no lease (the session is held) reads nothing.
        const sid = freshSessionId();
        await start(inputDraft(sid, "one"), claim);
        const busy = await start(inputDraft(sid, "two"), claim);
        expect(busy.started).toBeUndefined();
      },
    );

    lawWhere(options.turnStart)(
      `a turn start ${offered ? "admits its input's turn in its step, as admitTurn would" : "admits nothing in its step"}`,
      async () => {
        await inOneWindow();
        const { store, quotas } = ports();
        const start = store.startTurn?.bind(store);
        if (!start) throw new Error("this backend has no startTurn");
        const tenant = freshTenant();
        const limits: TenantQuota = {
          concurrent_turns: { max: 1, mode: "queue" },
          turns_per_minute: { max: 5, mode: "reject" },
        };
        const claim = {
          owner: opaqueOwner("a"),
          ttlMs: LONG_TTL_MS,
          maxInputs: 1,
          admission: { tenant, limits, slotTtlMs: LONG_TTL_MS },
        };
        const sid = freshSessionId();
        const receipt = await start(inputDraft(sid, "hello"), claim);
        expect(receipt.started).toBeDefined();
        const usage = await quotas.readQuotaUsage(tenant);
        if (!offered) {
          expect(receipt.admission).toBeUndefined();
          expect([usage.runningTurns, usage.turnsThisMinute]).toEqual([0, 0]);
          return;
        }
        const holder = `${sid}/${turnIdOfInput(sid, receipt.submitted.input.inputId)}`;
        expect(receipt.admission).toEqual({ kind: "admitted", holder });
        expect([usage.runningTurns, usage.turnsThisMinute]).toEqual([1, 1]);
        // The slot is the holder's, as admitTurn takes it: admitting it again is a readmission.
        expect(await quotas.admitTurn({ tenant, holder, limits, slotTtlMs: LONG_TTL_MS })).toEqual({
          kind: "admitted",
          readmitted: true,
        });
      },
    );

    lawWhere(options.turnStart && offered)(
      "a turn start its admission refuses stores the input and takes no lease, claim or slot",
      async () => {
        await inOneWindow();
        const { store, quotas } = ports();
        const start = store.startTurn?.bind(store);
        if (!start) throw new Error("this backend has no startTurn");
        const tenant = freshTenant();
        const limits: TenantQuota = { concurrent_turns: { max: 1, mode: "queue" } };
        await quotas.admitTurn({ tenant, holder: "other/t", limits, slotTtlMs: LONG_TTL_MS });
        const before = await quotas.readQuotaUsage(tenant);
        const sid = freshSessionId();
        const receipt = await start(inputDraft(sid, "hello"), {
          owner: opaqueOwner("a"),
          ttlMs: LONG_TTL_MS,
          maxInputs: 1,
          admission: { tenant, limits, slotTtlMs: LONG_TTL_MS },
        });
        expect(receipt.admission).toMatchObject({ kind: "refused", limit: "concurrent_turns" });
        expect(
          receipt.admission?.kind === "refused" && receipt.admission.retryAfterMs,
        ).toBeGreaterThan(0);
        expect(receipt.started).toBeUndefined();
        expect(await store.currentLease(sid)).toBeUndefined();
        // The input waits, unclaimed, for the driver's own claim once the limit frees.
        expect((await store.listInputs(sid)).map((i) => [i.inputId, i.state])).toEqual([
          [receipt.submitted.input.inputId, "pending"],
        ]);
        const after = await quotas.readQuotaUsage(tenant);
        expect([after.runningTurns, after.turnsThisMinute]).toEqual([
          before.runningTurns,
          before.turnsThisMinute,
        ]);
      },
    );
  });
}
