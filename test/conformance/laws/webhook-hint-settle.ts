// The hint dropped in the settle (ADR 0021 "The hint dropped in the settle"): where the store keeps
// the hint index in the outbox's own steps (memory, a standalone or Sentinel Redis), every write
// of outbox rows (a commit, a park, enqueueWebhookEvent) lists the outbox in the index in its
// step, and a settle that leaves the outbox empty drops it in its step; rows left (held by
// another claim, retried) keep it, due when the first of them is owed a look. Where it cannot (Cluster: the index is in another slot),
// writers list the outbox in separate steps and only a look drops it: a write leaves the index
// as it was, and so does a settle.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import type { OutboxRowSettlement } from "../../../src/domain/webhooks.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import { acquire, expectTetherError, violationFields } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
  waitingTurn,
} from "../support/fixtures.js";
import { webhookEvent as event } from "../support/webhook-fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const FAR_FUTURE_MS = 8_000_000_000_000;
const done = (eventId: string): OutboxRowSettlement => ({ eventId, settlement: { kind: "done" } });

/** `keeps`: whether this backend keeps the hint in the outbox's steps (not Cluster). */
export function describeWebhookHintSettleLaws(factory: StoreFactory, keeps: boolean): void {
  describe("the outbox hint kept in the outbox's steps (ADR 0021)", () => {
    const harness = useStoreHarness(factory);
    const parts = () => {
      const { store, webhooks } = harness();
      if (!webhooks) throw new Error("this backend's harness has no webhook store");
      expect(webhooks.keepsOutboxHint ?? false).toBe(keeps);
      expect(store.foldsOutbox ?? false).toBe(keeps);
      return { store, hooks: webhooks as WebhookStore };
    };
    const listed = async (hooks: WebhookStore, sid: SessionId) =>
      (await hooks.dueOutboxes(10_000)).includes(sid);

    test("every write of outbox rows lists the session in the hint index in its own step", async () => {
      const { store, hooks } = parts();
      // A commit's rows without a fold (due at once), and with a fold's expect.
      const plain = freshSessionId();
      await store.commit(commitDraft(plain, 0, { webhookEvents: [event(plain)] }));
      expect(await listed(hooks, plain)).toBe(keeps);
      const foldedSid = freshSessionId();
      const fold = { nowMs: 0, dueAtMs: 1 };
      await store.commit(
        commitDraft(foldedSid, 0, { webhookEvents: [event(foldedSid)], outboxFold: fold }),
      );
      expect(await listed(hooks, foldedSid)).toBe(keeps);
      // A park's row, with the writer's expect and without (due at once).
      for (const outboxExpect of [{ nowMs: 0, dueAtMs: 1 }, undefined]) {
        const sid = freshSessionId();
        const lease = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
        await store.parkTurn(fenceOf(lease), {
          ...waitingTurn("t1"),
          webhookEvent: { ...event(sid), type: "session.action_required" },
          ...(outboxExpect && { outboxExpect }),
        });
        expect(await listed(hooks, sid)).toBe(keeps);
      }
      // A park whose expect is due later: listed, not due yet.
      const later = freshSessionId();
      const lease = await acquire(store, later, opaqueOwner("a"), LONG_TTL_MS);
      await store.parkTurn(fenceOf(lease), {
        ...waitingTurn("t1"),
        webhookEvent: { ...event(later), type: "session.action_required" },
        outboxExpect: { nowMs: 0, dueAtMs: FAR_FUTURE_MS },
      });
      expect(await listed(hooks, later)).toBe(false);
      await hooks.noteOutbox(later, 0);
      expect(await listed(hooks, later)).toBe(true);
      // enqueueWebhookEvent (a schedule's pause, a replay), due at once.
      const enqueued = freshSessionId();
      await hooks.enqueueWebhookEvent(enqueued, event(enqueued));
      expect(await listed(hooks, enqueued)).toBe(keeps);
    });

    test("a settle that empties the outbox drops the hint in its step; rows left keep it", async () => {
      const { hooks } = parts();
      const sid = freshSessionId();
      for (const id of ["msg_a", "msg_b", "msg_c"]) {
        await hooks.enqueueWebhookEvent(sid, event(sid, id));
      }
      await hooks.noteOutbox(sid, 0);
      const ids = async (token: string, max: number) =>
        (await hooks.claimOutbox(sid, token, LONG_TTL_MS, max)).claims.map((c) => c.row.event.id);
      const [a = "", b = ""] = await ids("first", 2);
      const [c = ""] = await ids("second", 2);
      // One row done, one retried: the retried row and the other claim's keep the hint.
      const retry = { kind: "retry" as const, dueAtMs: 0, targets: ["ep-1"] };
      await hooks.settleOutboxBatch(sid, "first", [done(a), { eventId: b, settlement: retry }]);
      expect(await listed(hooks, sid)).toBe(true);
      // The other claim's row goes; the retried one is left and keeps it.
      await hooks.settleOutboxBatch(sid, "second", [done(c)]);
      expect(await listed(hooks, sid)).toBe(true);
      // The last row goes: the settle drops the hint (on Cluster only a look does).
      expect(await ids("third", 10)).toEqual([b]);
      expect((await hooks.settleOutboxBatch(sid, "third", [done(b)])).settled).toBe(1);
      expect(await listed(hooks, sid)).toBe(!keeps);
      // A row written after that settle lists the outbox again, in its own step (on Cluster the
      // hint is still there: nothing dropped it).
      await hooks.enqueueWebhookEvent(sid, event(sid, "msg_next"));
      expect(await listed(hooks, sid)).toBe(true);
    });

    test("a settle that leaves rows makes the hint due when the first is owed a look: a retry's due time, a live claim's lease end", async () => {
      const { hooks } = parts();
      // A retry far ahead: not due until then (on Cluster the settle leaves the hint as it was).
      const retried = freshSessionId();
      await hooks.enqueueWebhookEvent(retried, event(retried, "msg_r"));
      await hooks.noteOutbox(retried, 0);
      expect((await hooks.claimOutbox(retried, "mine", LONG_TTL_MS, 10)).claims).toHaveLength(1);
      const retry = { kind: "retry" as const, dueAtMs: FAR_FUTURE_MS, targets: ["ep-1"] };
      await hooks.settleOutboxBatch(retried, "mine", [{ eventId: "msg_r", settlement: retry }]);
      expect(await listed(hooks, retried)).toBe(!keeps);
      // A row written meanwhile is owed a look at once, whatever the retry's time.
      await hooks.enqueueWebhookEvent(retried, event(retried, "msg_new"));
      expect(await listed(hooks, retried)).toBe(true);
      // A row another live claim holds: due when that claim's lease ends, not before.
      const held = freshSessionId();
      for (const id of ["msg_x", "msg_y"]) await hooks.enqueueWebhookEvent(held, event(held, id));
      await hooks.noteOutbox(held, 0);
      expect((await hooks.claimOutbox(held, "first", LONG_TTL_MS, 1)).claims).toHaveLength(1);
      const second = await hooks.claimOutbox(held, "second", LONG_TTL_MS, 1);
      const [taken = ""] = second.claims.map((c) => c.row.event.id);
      await hooks.settleOutboxBatch(held, "second", [done(taken)]);
      expect(await listed(hooks, held)).toBe(!keeps);
      // A settle of no rows sets the hint the same way.
      await hooks.noteOutbox(held, 0);
      await hooks.settleOutboxBatch(held, "nobody", []);
      expect(await listed(hooks, held)).toBe(!keeps);
    });

    test("a settle refused for a lost claim leaves the hint, due when that claim's lease ends; a park's bad expect is refused naming the field", async () => {
      const { store, hooks } = parts();
      const sid = freshSessionId();
      await hooks.enqueueWebhookEvent(sid, event(sid, "msg_held"));
      await hooks.noteOutbox(sid, 0);
      expect((await hooks.claimOutbox(sid, "lost", SHORT_TTL_MS, 10)).claims).toHaveLength(1);
      // Another token settles nothing: the row is still there, and so is the hint (off Cluster
      // due when the lost claim's lease ends, when the row can be claimed again).
      expect((await hooks.settleOutboxBatch(sid, "other", [done("msg_held")])).settled).toBe(0);
      expect(await listed(hooks, sid)).toBe(!keeps);
      await harness().advanceTime(PAST_SHORT_TTL_MS);
      expect(await listed(hooks, sid)).toBe(true);
      expect((await hooks.claimOutbox(sid, "next", LONG_TTL_MS, 10)).claims).toHaveLength(1);
      const parked = freshSessionId();
      const lease = await acquire(store, parked, opaqueOwner("a"), LONG_TTL_MS);
      const error = await expectTetherError(
        () =>
          store.parkTurn(fenceOf(lease), {
            ...waitingTurn("t1"),
            webhookEvent: event(parked),
            outboxExpect: { nowMs: 1.5, dueAtMs: 2 },
          }),
        "invalid_argument",
      );
      expect(violationFields(error).some((f) => /outbox_expect\.now_ms$/u.test(f))).toBe(true);
      expect((await hooks.claimOutbox(parked, "probe", LONG_TTL_MS, 10)).remaining).toBe(0);
    });
  });
}
