// Webhooks (ADR 0021): an event is written to the session's outbox by the same step as the commit
// or park it reports, and not by a refused one; outbox rows are claimed under a lease (one holder
// at a time, a dead holder's rows come back) and settled only by their claim's token; endpoints
// are tenant-scoped; every attempt is logged and 20 failures in a row disable the endpoint.
// Runs on memory, Redis and Redis Cluster; not on the wire (ADR 0021).
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { schedulePausedEvent, type WebhookDelivery } from "../../../src/domain/webhooks.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
  waitingTurn,
} from "../support/fixtures.js";
import { endpointDraft, webhookEvent as event } from "../support/webhook-fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const FAR_FUTURE_MS = 8_000_000_000_000;
const attempt = (endpointId: string, ok: boolean, n: number): WebhookDelivery => ({
  deliveryId: `d-${n}`,
  endpointId,
  eventId: `msg_${n}`,
  eventType: "turn.completed",
  event: {
    id: `msg_${n}`,
    type: "turn.completed",
    createdAtMs: 1_700_000_000_000,
    data: { session_id: "s", turn_id: "t1", call_ids: [] },
  },
  outboxId: "t:s",
  attempt: n,
  ok,
  status: ok ? 200 : 500,
  error: ok ? "" : "HTTP 500",
  atMs: 1_700_000_000_000 + n,
});

export function describeWebhookLaws(factory: StoreFactory): void {
  describe("webhooks", () => {
    const harness = useStoreHarness(factory);
    const hooks = (): WebhookStore => {
      const w = harness().webhooks;
      if (!w) throw new Error("this backend's harness has no webhook store");
      return w;
    };

    test("a commit writes its event to the session's outbox; a refused commit writes none", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = event(sid);
      await store.commit(commitDraft(sid, 0, { webhookEvents: [first] }));
      await expectTetherError(
        () => store.commit(commitDraft(sid, 0, { webhookEvents: [event(sid, "msg_refused")] })),
        "head_revision_conflict",
      );
      const report = await hooks().claimOutbox(sid, "c1", LONG_TTL_MS, 10);
      expect(report.remaining).toBe(1);
      expect(report.claims.map((c) => c.row)).toEqual([
        { event: first, attempts: 0, dueAtMs: report.claims[0]?.row.dueAtMs, targets: undefined },
      ]);
    });

    test("a commit writes every event it carries, each once, also when the commit is replayed", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const ended = event(sid, "msg_turn_end");
      const budget = { ...event(sid, "msg_budget"), type: "session.budget_reached" as const };
      const draft = commitDraft(sid, 0, {
        webhookEvents: [ended, budget],
        stamp: { operationId: "turn:t1", contentHash: "h1" },
      });
      await store.commit(draft);
      expect((await store.commit(draft)).replayed).toBe(true);
      const report = await hooks().claimOutbox(sid, "c1", LONG_TTL_MS, 10);
      expect(
        report.claims.map((c) => c.row.event).sort((a, b) => a.id.localeCompare(b.id)),
      ).toEqual([budget, ended]);
    });

    test("a park writes its event in the park's step; a refused park writes none", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const lease = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const parkEvent = { ...event(sid), type: "session.action_required" as const };
      await store.parkTurn(fenceOf(lease), { ...waitingTurn("t1"), webhookEvent: parkEvent });
      // The lease is gone with the park: the same fence is stale now.
      await expectTetherError(
        () =>
          store.parkTurn(fenceOf(lease), { ...waitingTurn("t1"), webhookEvent: event(sid, "x") }),
        "session_execution_lease_expired",
      );
      const report = await hooks().claimOutbox(sid, "c1", LONG_TTL_MS, 10);
      expect(report.claims.map((c) => c.row.event)).toEqual([parkEvent]);
    });

    test("a claimed row is not claimed again while its lease lives, and is after it expires", async () => {
      const sid = freshSessionId();
      const e = event(sid);
      expect(await hooks().enqueueWebhookEvent(sid, e)).toBe(true);
      expect(await hooks().enqueueWebhookEvent(sid, e)).toBe(false);
      expect((await hooks().claimOutbox(sid, "a", SHORT_TTL_MS, 10)).claims).toHaveLength(1);
      const during = await hooks().claimOutbox(sid, "b", SHORT_TTL_MS, 10);
      expect(during).toEqual({ claims: [], remaining: 1 });
      await harness().advanceTime(PAST_SHORT_TTL_MS);
      const after = await hooks().claimOutbox(sid, "b", LONG_TTL_MS, 10);
      expect(after.claims.map((c) => [c.claimToken, c.row.event.id])).toEqual([["b", e.id]]);
      // The first claimant's token no longer settles the row; the second's does.
      expect(await hooks().settleOutbox(sid, e.id, "a", { kind: "done" })).toBe(false);
      expect(await hooks().settleOutbox(sid, e.id, "b", { kind: "done" })).toBe(true);
      expect(await hooks().claimOutbox(sid, "c", LONG_TTL_MS, 10)).toEqual({
        claims: [],
        remaining: 0,
      });
    });

    test("concurrent claims of one outbox give each row to one claimant", async () => {
      const sid = freshSessionId();
      for (let i = 0; i < 5; i++) await hooks().enqueueWebhookEvent(sid, event(sid, `msg_${i}`));
      const reports = await Promise.all(
        ["a", "b", "c", "d"].map((token) => hooks().claimOutbox(sid, token, LONG_TTL_MS, 10)),
      );
      const ids = reports.flatMap((r) => r.claims.map((c) => c.row.event.id)).sort();
      expect(ids).toEqual(["msg_0", "msg_1", "msg_2", "msg_3", "msg_4"]);
    });

    test("retry keeps the same event for the named targets, due later, one attempt more", async () => {
      const sid = freshSessionId();
      const e = event(sid);
      await hooks().enqueueWebhookEvent(sid, e);
      await hooks().claimOutbox(sid, "a", LONG_TTL_MS, 10);
      const later = { kind: "retry" as const, dueAtMs: 0, targets: ["ep-2"] };
      expect(await hooks().settleOutbox(sid, e.id, "a", later)).toBe(true);
      const again = await hooks().claimOutbox(sid, "b", LONG_TTL_MS, 10);
      expect(again.claims.map((c) => c.row)).toEqual([
        { event: e, attempts: 1, dueAtMs: 0, targets: ["ep-2"] },
      ]);
      // A row due in the future is not claimable yet.
      const future = { kind: "retry" as const, dueAtMs: 8_000_000_000_000, targets: ["ep-2"] };
      expect(await hooks().settleOutbox(sid, e.id, "b", future)).toBe(true);
      expect(await hooks().claimOutbox(sid, "c", LONG_TTL_MS, 10)).toEqual({
        claims: [],
        remaining: 1,
      });
    });

    test("the hint index lists noted outboxes until a look settles them empty", async () => {
      const sid = freshSessionId();
      await hooks().enqueueWebhookEvent(sid, event(sid));
      await hooks().noteOutbox(sid, 0);
      expect(await hooks().dueOutboxes(10_000)).toContain(sid);
      // Not empty: a look that drops the hint adds it back, due.
      await hooks().settleOutboxHint(sid, 10);
      expect(await hooks().dueOutboxes(10_000)).toContain(sid);
      const claim = await hooks().claimOutbox(sid, "a", LONG_TTL_MS, 10);
      const id = claim.claims[0]?.row.event.id ?? "";
      await hooks().settleOutbox(sid, id, "a", { kind: "done" });
      await hooks().settleOutboxHint(sid, 10);
      expect(await hooks().dueOutboxes(10_000)).not.toContain(sid);
    });

    test("a note only moves the hint earlier; a look's next due time moves it either way", async () => {
      const sid = freshSessionId();
      await hooks().noteOutbox(sid, FAR_FUTURE_MS);
      expect(await hooks().dueOutboxes(10_000)).not.toContain(sid);
      await hooks().noteOutbox(sid, 5);
      await hooks().noteOutbox(sid, FAR_FUTURE_MS);
      expect(await hooks().dueOutboxes(10_000)).toContain(sid);
      // The look began after the note (at 5): its next due time replaces it.
      await hooks().settleOutboxHint(sid, 10, FAR_FUTURE_MS);
      expect(await hooks().dueOutboxes(10_000)).not.toContain(sid);
    });

    test("an expect before a write holds through a look that began before it, and its row is found when its writer never notes", async () => {
      const sid = freshSessionId();
      const now = Date.now();
      await hooks().noteOutbox(sid, 0);
      // A writer expects a row (due a lease ahead) while a deliverer's look that began at
      // `now - 1` is still going: the look finds nothing and would drop the hint.
      await hooks().expectOutbox(sid, now, now + LONG_TTL_MS);
      await hooks().settleOutboxHint(sid, now - 1);
      await hooks().enqueueWebhookEvent(sid, event(sid));
      // The writer is lost before its note: the hint stands, due at the expect's time. Where the
      // store keeps the hint in its steps (webhook-hint-settle.ts) the write listed it due at once.
      const keeps = hooks().keepsOutboxHint === true;
      expect((await hooks().dueOutboxes(10_000)).includes(sid)).toBe(keeps);
      await hooks().expectOutbox(sid, now, 1);
      expect(await hooks().dueOutboxes(10_000)).toContain(sid);
      // A look's retry time later than a standing note does not push it back.
      await hooks().settleOutboxHint(sid, 0, FAR_FUTURE_MS);
      expect(await hooks().dueOutboxes(10_000)).toContain(sid);
    });

    test("an expect moves a due hint a lease ahead and a later one earlier", async () => {
      const sid = freshSessionId();
      const now = Date.now();
      await hooks().noteOutbox(sid, 0);
      await hooks().expectOutbox(sid, now, FAR_FUTURE_MS);
      expect(await hooks().dueOutboxes(10_000)).not.toContain(sid);
      // Due later than the writer's now: moved earlier, to the expect's time.
      await hooks().expectOutbox(sid, now, 1);
      expect(await hooks().dueOutboxes(10_000)).toContain(sid);
    });

    test("hint calls refuse bad input naming the field", async () => {
      const sid = freshSessionId();
      const refusals: [() => Promise<unknown>, string][] = [
        [() => hooks().noteOutbox(sid, -1), "due_at_ms"],
        [() => hooks().expectOutbox(sid, 1.5, 2), "now_ms"],
        [() => hooks().settleOutboxHint(sid, 0, -5), "next_due_at_ms"],
        [() => hooks().settleOutboxHint("a b" as SessionId, 0), "outbox_id"],
      ];
      for (const [call, field] of refusals) {
        const error = await expectTetherError(call, "invalid_argument");
        expect(error.message.startsWith(`${field}:`)).toBe(true);
      }
    });

    test("a schedule pause's event (the seam) goes through an outbox of its own like any other", async () => {
      const { outboxId, event: paused } = schedulePausedEvent(
        "acme",
        "nightly",
        "target deleted",
        1_700_000_000_000,
      );
      const id = outboxId as SessionId;
      expect(await hooks().enqueueWebhookEvent(id, paused, ["ep-1"])).toBe(true);
      const report = await hooks().claimOutbox(id, "a", LONG_TTL_MS, 10);
      expect(report.claims.map((c) => [c.row.event, c.row.targets])).toEqual([
        [
          {
            id: "msg_sched_nightly_1700000000000",
            type: "schedule.paused",
            createdAtMs: 1_700_000_000_000,
            data: { schedule_id: "nightly", reason: "target deleted" },
          },
          ["ep-1"],
        ],
      ]);
    });

    test("bad input is refused with a typed error naming the field, and changes nothing", async () => {
      const sid = freshSessionId();
      const refused = async (call: () => Promise<unknown>, field: string) => {
        const error = await expectTetherError(call, "invalid_argument");
        expect(error.violations.map((v) => v.field)).toEqual([field]);
      };
      await refused(() => hooks().claimOutbox(sid, "a", 0, 10), "lease_ms");
      await refused(() => hooks().claimOutbox(sid, "a", LONG_TTL_MS, 0), "max");
      await refused(() => hooks().enqueueWebhookEvent(sid, { ...event(sid), id: "" }), "event.id");
      await refused(
        () => hooks().enqueueWebhookEvent(sid, { ...event(sid), type: "nope" as "turn.failed" }),
        "event.type",
      );
      await refused(() => hooks().getEndpoint("acme", ""), "endpoint_id");
      await refused(
        () => hooks().createEndpoint({ ...endpointDraft("acme", "x"), tenant: "" }),
        "tenant",
      );
      expect(await hooks().claimOutbox(sid, "a", LONG_TTL_MS, 10)).toEqual({
        claims: [],
        remaining: 0,
      });
    });

    test("endpoints are created once per id, read, updated and deleted per tenant", async () => {
      const tenant = `t-${randomUUID().slice(0, 8)}`;
      const created = await hooks().createEndpoint(endpointDraft(tenant, "ep-1"));
      expect(created).toEqual({
        ...endpointDraft(tenant, "ep-1"),
        disabled: false,
        disabledReason: "",
        consecutiveFailures: 0,
      });
      expect(await hooks().createEndpoint(endpointDraft(tenant, "ep-1"))).toBeUndefined();
      expect(await hooks().getEndpoint("other-tenant", "ep-1")).toBeUndefined();
      await hooks().createEndpoint(endpointDraft(tenant, "ep-0"));
      expect((await hooks().listEndpoints(tenant)).map((e) => e.endpointId)).toEqual([
        "ep-0",
        "ep-1",
      ]);
      const updated = await hooks().updateEndpoint({
        tenant,
        endpointId: "ep-1",
        url: "https://other.example.com/",
        eventTypes: [],
      });
      expect(updated).toMatchObject({ url: "https://other.example.com/", eventTypes: [] });
      expect(await hooks().updateEndpoint({ tenant, endpointId: "nope" })).toBeUndefined();
      expect(await hooks().deleteEndpoint(tenant, "ep-1")).toBe(true);
      expect(await hooks().deleteEndpoint(tenant, "ep-1")).toBe(false);
      expect(await hooks().getEndpoint(tenant, "ep-1")).toBeUndefined();
    });

    test("20 failures in a row disable an endpoint; a success resets the count; re-enabling clears it", async () => {
      const tenant = `t-${randomUUID().slice(0, 8)}`;
      await hooks().createEndpoint(endpointDraft(tenant, "ep"));
      for (let n = 1; n <= 19; n++)
        await hooks().recordDelivery(tenant, attempt("ep", false, n), 20);
      expect(await hooks().recordDelivery(tenant, attempt("ep", true, 20), 20)).toMatchObject({
        disabled: false,
        consecutiveFailures: 0,
      });
      let last;
      for (let n = 21; n <= 40; n++) {
        last = await hooks().recordDelivery(tenant, attempt("ep", false, n), 20);
      }
      expect(last).toMatchObject({
        disabled: true,
        disabledReason: "20 consecutive failed deliveries",
        consecutiveFailures: 20,
      });
      const page = await hooks().listDeliveries(tenant, "ep", { limit: 3 });
      expect(page.deliveries.map((d) => d.deliveryId)).toEqual(["d-40", "d-39", "d-38"]);
      const next = await hooks().listDeliveries(tenant, "ep", {
        limit: 100,
        cursor: page.nextCursor ?? "",
      });
      expect(next.deliveries).toHaveLength(37);
      // The event is logged as sent (an empty list stays a list), so a replay can send it again.
      expect(next.deliveries[36]?.event).toEqual({
        id: "msg_1",
        type: "turn.completed",
        createdAtMs: 1_700_000_000_000,
        data: { session_id: "s", turn_id: "t1", call_ids: [] },
      });
      expect(next.nextCursor).toBeUndefined();
      expect(
        await hooks().updateEndpoint({ tenant, endpointId: "ep", disabled: false }),
      ).toMatchObject({ disabled: false, disabledReason: "", consecutiveFailures: 0 });
      expect(await hooks().recordDelivery(tenant, attempt("gone", true, 1), 20)).toBeUndefined();
    });
  });
}
