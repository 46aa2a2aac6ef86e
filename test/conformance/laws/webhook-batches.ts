// Webhook batches (ADR 0021 "Batches"): a deliverer settles every row of one claim in one step,
// only those its token still holds, once; and each tenant's endpoints carry a version that every
// change moves (create, update such as a secret rotation, delete, a disable by failures), so a
// deliverer's cache checked against it never serves a deleted, rotated or disabled endpoint.
// Runs on memory, Redis and Redis Cluster.
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { WebhookDelivery } from "../../../src/domain/webhooks.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { expectTetherError } from "../support/expectations.js";
import {
  freshSessionId,
  LONG_TTL_MS,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
} from "../support/fixtures.js";
import { endpointDraft as draft, webhookEvent as event } from "../support/webhook-fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const failed = (endpointId: string, n: number): WebhookDelivery => ({
  deliveryId: `d-${n}`,
  endpointId,
  eventId: `msg_${n}`,
  eventType: "turn.completed",
  event: { id: `msg_${n}`, type: "turn.completed", createdAtMs: 1, data: {} },
  outboxId: "t:s",
  attempt: n,
  ok: false,
  status: 500,
  error: "HTTP 500",
  atMs: 1_700_000_000_000 + n,
});

export function describeWebhookBatchLaws(factory: StoreFactory): void {
  describe("webhook batches", () => {
    const harness = useStoreHarness(factory);
    const hooks = (): WebhookStore => {
      const w = harness().webhooks;
      if (!w) throw new Error("this backend's harness has no webhook store");
      return w;
    };

    test("a claim's rows are settled in one step, once, and only while its token holds them", async () => {
      const sid = freshSessionId();
      for (const id of ["msg_a", "msg_b", "msg_c"]) {
        await hooks().enqueueWebhookEvent(sid, event(sid, id));
      }
      const claim = await hooks().claimOutbox(sid, "x", LONG_TTL_MS, 10);
      expect(claim.claims).toHaveLength(3);
      // Another token settles nothing.
      const done = { kind: "done" as const };
      expect(
        (await hooks().settleOutboxBatch(sid, "y", [{ eventId: "msg_a", settlement: done }]))
          .settled,
      ).toBe(0);
      const batch = [
        { eventId: "msg_a", settlement: done },
        { eventId: "msg_b", settlement: { kind: "retry" as const, dueAtMs: 0, targets: ["ep-2"] } },
        { eventId: "msg_gone", settlement: done },
      ];
      expect((await hooks().settleOutboxBatch(sid, "x", batch)).settled).toBe(2);
      // Settled once: the same batch again settles nothing (a is gone, b is no longer held).
      expect((await hooks().settleOutboxBatch(sid, "x", batch)).settled).toBe(0);
      const next = await hooks().claimOutbox(sid, "z", LONG_TTL_MS, 10);
      expect(next.claims.map((c) => c.row)).toEqual([
        { event: event(sid, "msg_b"), attempts: 1, dueAtMs: 0, targets: ["ep-2"] },
      ]);
      // msg_c is still held by x: no live claim shares a row.
      expect(next.remaining).toBe(2);
      expect(
        (await hooks().settleOutboxBatch(sid, "x", [{ eventId: "msg_c", settlement: done }]))
          .settled,
      ).toBe(1);
      expect(
        (await hooks().settleOutboxBatch(sid, "z", [{ eventId: "msg_b", settlement: done }]))
          .settled,
      ).toBe(1);
      expect(await hooks().claimOutbox(sid, "w", LONG_TTL_MS, 10)).toEqual({
        claims: [],
        remaining: 0,
      });
    });

    test("a batch of an expired claim settles nothing once another claim took its rows", async () => {
      const sid = freshSessionId();
      await hooks().enqueueWebhookEvent(sid, event(sid, "msg_a"));
      await hooks().claimOutbox(sid, "old", SHORT_TTL_MS, 10);
      await harness().advanceTime(PAST_SHORT_TTL_MS);
      expect((await hooks().claimOutbox(sid, "new", LONG_TTL_MS, 10)).claims).toHaveLength(1);
      const done = [{ eventId: "msg_a", settlement: { kind: "done" as const } }];
      expect((await hooks().settleOutboxBatch(sid, "old", done)).settled).toBe(0);
      expect((await hooks().settleOutboxBatch(sid, "new", done)).settled).toBe(1);
    });

    test("every endpoint change moves the tenant's version; an unchanged version returns no endpoints", async () => {
      const tenant = `t-${randomUUID().slice(0, 8)}`;
      const first = await hooks().endpointsSince(tenant);
      expect(first.endpoints).toEqual([]);
      expect(await hooks().endpointsSince(tenant, first.version)).toEqual({
        version: first.version,
      });
      await hooks().createEndpoint(draft(tenant, "ep"));
      const created = await hooks().endpointsSince(tenant, first.version);
      expect(created.endpoints?.map((e) => e.endpointId)).toEqual(["ep"]);
      // A rotated secret is seen from the next check on.
      await hooks().updateEndpoint({ tenant, endpointId: "ep", secret: "whsec_rotated" });
      const rotated = await hooks().endpointsSince(tenant, created.version);
      expect(rotated.version).not.toBe(created.version);
      expect(rotated.endpoints?.[0]?.secret).toBe("whsec_rotated");
      // A disable by failures is seen (a cached endpoint is not sent to once disabled).
      for (let n = 1; n <= 3; n++) await hooks().recordDelivery(tenant, failed("ep", n), 3);
      const disabled = await hooks().endpointsSince(tenant, rotated.version);
      expect(disabled.endpoints?.[0]?.disabled).toBe(true);
      // A delete is seen; a delete of nothing moves nothing.
      expect(await hooks().deleteEndpoint(tenant, "ep")).toBe(true);
      const deleted = await hooks().endpointsSince(tenant, disabled.version);
      expect(deleted.endpoints).toEqual([]);
      expect(await hooks().deleteEndpoint(tenant, "ep")).toBe(false);
      expect(await hooks().endpointsSince(tenant, deleted.version)).toEqual({
        version: deleted.version,
      });
      // Another tenant's versions are its own.
      const other = await hooks().endpointsSince(`o-${tenant}`, deleted.version);
      expect(other.endpoints).toEqual([]);
    });

    test("batch calls refuse bad input naming the field", async () => {
      const sid = freshSessionId();
      const refusals: [() => Promise<unknown>, string][] = [
        [
          () =>
            hooks().settleOutboxBatch(sid, "x", [{ eventId: "", settlement: { kind: "done" } }]),
          "event_id",
        ],
        [() => hooks().settleOutboxBatch(sid, "", []), "claim_token"],
        [() => hooks().endpointsSince("t", -1), "known_version"],
      ];
      for (const [call, field] of refusals) {
        const error = await expectTetherError(call, "invalid_argument");
        expect(error.message.startsWith(`${field}:`)).toBe(true);
      }
    });
  });
}
