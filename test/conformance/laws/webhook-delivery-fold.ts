// Delivery records in the settle (ADR 0021 "Delivery records in the settle"): where the store
// folds them (memory, a standalone or Sentinel Redis), settleOutboxBatch takes a batch's delivery
// records and applies them in its own step, after the row checks, as recordDelivery does; every
// attempt is logged whether or not the token still holds its row, and a retried row is owed only
// to endpoints still there and enabled. Where it cannot (Cluster: the tenant's keys are in another
// slot than the outbox) the fold is not offered, a settle given records is refused, and a
// deliverer records each attempt with recordDelivery, as before.
import { describe, expect, test } from "vitest";
import { type SessionId } from "../../../src/domain/ids.js";
import type { OutboxRowSettlement, WebhookDelivery } from "../../../src/domain/webhooks.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { expectTetherError, violationFields } from "../support/expectations.js";
import { LONG_TTL_MS } from "../support/fixtures.js";
import {
  endpointDraft,
  tenantSession as tenantSession,
  webhookEvent as event,
} from "../support/webhook-fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const LIMIT = 3;

const attempt = (sid: SessionId, endpointId: string, n: number, ok: boolean): WebhookDelivery => ({
  deliveryId: `msg_${n}.${endpointId}.1`,
  endpointId,
  eventId: `msg_${n}`,
  eventType: "turn.completed",
  event: event(sid, `msg_${n}`),
  outboxId: sid,
  attempt: 1,
  ok,
  status: ok ? 200 : 500,
  error: ok ? "" : "HTTP 500",
  atMs: 1_700_000_000_000 + n,
});

const retry = (eventId: string, targets: string[]): OutboxRowSettlement => ({
  eventId,
  settlement: { kind: "retry", dueAtMs: 0, targets },
});

/** `folds`: whether this backend takes delivery records in the settle (not Cluster). */
export function describeWebhookDeliveryFoldLaws(factory: StoreFactory, folds: boolean): void {
  describe("webhook delivery records in the settle (ADR 0021)", () => {
    const harness = useStoreHarness(factory);
    const hooks = (): WebhookStore => {
      const w = harness().webhooks;
      if (!w) throw new Error("this backend's harness has no webhook store");
      expect(w.foldsDeliveries ?? false).toBe(folds);
      return w;
    };

    /** Two endpoints, rows msg_1..msg_n claimed by `token`. */
    async function claimed(n: number, token: string) {
      const { tenant, sid } = tenantSession("dfold");
      await hooks().createEndpoint(endpointDraft(tenant, "ep-a", []));
      await hooks().createEndpoint(endpointDraft(tenant, "ep-b", []));
      for (let i = 1; i <= n; i++) await hooks().enqueueWebhookEvent(sid, event(sid, `msg_${i}`));
      expect((await hooks().claimOutbox(sid, token, LONG_TTL_MS, 10)).claims).toHaveLength(n);
      return { tenant, sid };
    }

    test("a settle's delivery records equal recordDelivery's, disabling at the limit and moving the version", async () => {
      // The same attempts recorded one by one on one tenant, in the settle on another.
      const ids = [1, 2, 3];
      const records = (sid: SessionId) => [
        ...ids.map((n) => attempt(sid, "ep-a", n, false)),
        ...ids.map((n) => attempt(sid, "ep-b", n, n !== 2)),
      ];
      const separate = await claimed(3, "mine");
      const before = (await hooks().endpointsSince(separate.tenant)).version;
      for (const d of records(separate.sid)) {
        await hooks().recordDelivery(separate.tenant, d, LIMIT);
      }
      const folded = await claimed(3, "mine");
      const settlements = ids.map((n) => retry(`msg_${n}`, ["ep-a"]));
      if (!folds) {
        const error = await expectTetherError(
          () =>
            hooks().settleOutboxBatch(folded.sid, "mine", settlements, {
              tenant: folded.tenant,
              failureLimit: LIMIT,
              deliveries: records(folded.sid),
            }),
          "invalid_argument",
        );
        expect(violationFields(error)).toContain("deliveries");
        // Refused before any write: the rows are still the token's, nothing is logged.
        expect(
          (await hooks().listDeliveries(folded.tenant, "ep-a", { limit: 10 })).deliveries,
        ).toEqual([]);
        return;
      }
      const result = await hooks().settleOutboxBatch(folded.sid, "mine", settlements, {
        tenant: folded.tenant,
        failureLimit: LIMIT,
        deliveries: records(folded.sid),
      });
      expect(result.disabled).toEqual([
        { endpointId: "ep-a", reason: `${LIMIT} consecutive failed deliveries` },
      ]);
      for (const t of [separate, folded]) {
        // The same endpoints after (ep-a disabled, ep-b counting one failure then reset).
        const since = await hooks().endpointsSince(t.tenant, before);
        expect(since.version).toBe(before + 1);
      }
      const strip = (e: { tenant: string }[]) => e.map(({ tenant: _t, ...rest }) => rest);
      expect(strip(await hooks().listEndpoints(folded.tenant))).toEqual(
        strip(await hooks().listEndpoints(separate.tenant)),
      );
      const [a] = await hooks().listEndpoints(folded.tenant);
      expect(a?.disabled).toBe(true);
      for (const ep of ["ep-a", "ep-b"]) {
        const log = async (t: { tenant: string }) =>
          (await hooks().listDeliveries(t.tenant, ep, { limit: 10 })).deliveries.map((d) => ({
            ...d,
            event: {},
            outboxId: "",
          }));
        expect(await log(folded)).toEqual(await log(separate));
        expect(await log(folded)).toHaveLength(3);
      }
      // Owed only to ep-a, which the records disabled: the rows are done, not retried.
      expect(result.settled).toBe(3);
      expect(await hooks().claimOutbox(folded.sid, "probe", LONG_TTL_MS, 10)).toEqual({
        claims: [],
        remaining: 0,
      });
    });

    test("a retried row stays owed to an endpoint still enabled, and is dropped for a deleted one", async () => {
      if (!folds) return void expect(hooks().foldsDeliveries ?? false).toBe(false);
      const { tenant, sid } = await claimed(1, "mine");
      await hooks().createEndpoint(endpointDraft(tenant, "ep-gone", []));
      await hooks().deleteEndpoint(tenant, "ep-gone");
      const result = await hooks().settleOutboxBatch(
        sid,
        "mine",
        [retry("msg_1", ["ep-a", "ep-gone"])],
        {
          tenant,
          failureLimit: LIMIT,
          deliveries: [attempt(sid, "ep-a", 1, false), attempt(sid, "ep-gone", 1, false)],
        },
      );
      expect(result).toEqual({ settled: 1, disabled: [] });
      // The deleted endpoint's attempt is not logged (as recordDelivery: no such endpoint).
      expect((await hooks().listDeliveries(tenant, "ep-gone", { limit: 10 })).deliveries).toEqual(
        [],
      );
      const next = await hooks().claimOutbox(sid, "probe", LONG_TTL_MS, 10);
      expect(next.claims.map((c) => [c.row.attempts, c.row.targets])).toEqual([[1, ["ep-a"]]]);
    });

    test("a settle whose rows the token no longer holds settles nothing but still records its attempts", async () => {
      if (!folds) return void expect(hooks().foldsDeliveries ?? false).toBe(false);
      const { tenant, sid } = await claimed(2, "mine");
      // Another deliverer's token: the rows are not its own, the attempts happened all the same.
      const result = await hooks().settleOutboxBatch(
        sid,
        "lapsed",
        [retry("msg_1", ["ep-a"]), retry("msg_2", ["ep-a"])],
        {
          tenant,
          failureLimit: LIMIT,
          deliveries: [attempt(sid, "ep-a", 1, false), attempt(sid, "ep-a", 2, true)],
        },
      );
      expect(result).toEqual({ settled: 0, disabled: [] });
      const log = await hooks().listDeliveries(tenant, "ep-a", { limit: 10 });
      expect(log.deliveries.map((d) => [d.eventId, d.ok])).toEqual([
        ["msg_2", true],
        ["msg_1", false],
      ]);
      expect((await hooks().getEndpoint(tenant, "ep-a"))?.consecutiveFailures).toBe(0);
      // The rows are the holder's still: it settles them.
      const done = { kind: "done" as const };
      const rows = ["msg_1", "msg_2"].map((eventId) => ({ eventId, settlement: done }));
      expect((await hooks().settleOutboxBatch(sid, "mine", rows)).settled).toBe(2);
    });

    test("a settle's records with a bad field are refused naming it, and change nothing", async () => {
      const { tenant, sid } = await claimed(1, "mine");
      const good = { tenant, failureLimit: LIMIT, deliveries: [attempt(sid, "ep-a", 1, false)] };
      const bad: [typeof good, string][] = [
        [{ ...good, tenant: "" }, "tenant"],
        [{ ...good, failureLimit: 0 }, "failure_limit"],
        [
          { ...good, deliveries: [{ ...attempt(sid, "ep-a", 1, false), endpointId: "" }] },
          "endpoint_id",
        ],
      ];
      for (const [deliveries, field] of bad) {
        const error = await expectTetherError(
          () => hooks().settleOutboxBatch(sid, "mine", [retry("msg_1", ["ep-a"])], deliveries),
          "invalid_argument",
        );
        expect(violationFields(error)).toContain(field);
      }
      expect((await hooks().listDeliveries(tenant, "ep-a", { limit: 10 })).deliveries).toEqual([]);
      expect((await hooks().claimOutbox(sid, "probe", LONG_TTL_MS, 10)).claims).toEqual([]);
    });
  });
}
