// A turn's announcement in its commit's step (ADR 0011): the commit appends the turn's
// turn_completed to the session's log after its own writes and then releases the lease unless
// something waits for a holder, all or nothing, only under the live fence. Written against a
// store paired with its event log and run per backend in event-log.test.ts (memory, Redis,
// Cluster); the wire store takes no announcement (its commits are announced by the runtime).
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../src/domain/ids.js";
import { fenceOf, type LeaseFence } from "../../src/domain/lease.js";
import { queueClaimCompletion } from "../../src/domain/queue.js";
import type { CommitAnnouncement } from "../../src/domain/session.js";
import type { SessionEvent } from "../../src/domain/session-events.js";
import type { EventLogFactory } from "./event-log-laws.js";
import { STALE_FENCE_KINDS } from "./laws/fences.js";
import { acquire, expectTetherError } from "./support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
  workDraft,
} from "./support/fixtures.js";
import { useStoreHarness } from "./support/store-factory.js";

const usage = {
  inputTokens: 1,
  outputTokens: 2,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};

const completed = (headRevision: number): SessionEvent => ({
  type: "turn_completed",
  outcome: { kind: "finished", reason: "assistant_message", text: "done" },
  headRevision,
  usage,
  fencingToken: 1,
});

const announcement = (fence: LeaseFence, releaseIfIdle = true): CommitAnnouncement => ({
  fence,
  turnId: "turn-a",
  eventJson: JSON.stringify(completed(1)),
  releaseIfIdle,
});

const stamped = (turnId: string) => ({ operationId: `turn:${turnId}`, contentHash: "h" });

/** A turn's events held for its commit (ADR 0040): its start, a text window, its usage. */
const heldEvents: SessionEvent[] = [
  { type: "turn_started", inputIds: ["in-1"], turnIndex: 1 },
  { type: "text_delta", text: "done" },
  { type: "usage_reported", usage, iteration: 1 },
];

const withHeld = (a: CommitAnnouncement): CommitAnnouncement => ({
  ...a,
  heldEventsJson: heldEvents.map((e) => JSON.stringify(e)),
});

export function describeAnnouncementLaws(factory: EventLogFactory): void {
  describe("a commit that announces its turn (ADR 0011)", () => {
    const harness = useStoreHarness(factory);

    const types = async (sid: SessionId): Promise<string[]> =>
      (await harness().log.read(sid, 0, 100)).entries.map((e) => `${e.seq}:${e.event.type}`);

    test("appends after what the log holds, then releases a session nothing waits on", async () => {
      const { store, log } = harness();
      const sid = freshSessionId();
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await log.append(sid, [{ turnId: "turn-a", event: { type: "text_delta", text: "hi" } }]);
      const receipt = await store.commit(
        commitDraft(sid, 0, { appendMessages: ["m"], announce: announcement(fence) }),
      );
      // Where the store ends the turn's signals in the step, the receipt says so too (ADR 0024).
      expect(receipt).toMatchObject({
        sessionId: sid,
        headRevision: 1,
        replayed: false,
        announced: { seq: 2, released: true },
      });
      const entries = (await log.read(sid, 1, 10)).entries;
      expect(entries).toEqual([{ seq: 2, turnId: "turn-a", event: completed(1) }]);
      expect(await store.currentLease(sid)).toBeUndefined();
    });

    test("appends its held events in order just before the completion (ADR 0040)", async () => {
      const { store, log } = harness();
      const sid = freshSessionId();
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await log.append(sid, [{ turnId: "earlier", event: { type: "text_delta", text: "x" } }]);
      const receipt = await store.commit(
        commitDraft(sid, 0, { appendMessages: ["m"], announce: withHeld(announcement(fence)) }),
      );
      expect(receipt.announced).toMatchObject({ seq: 5, released: true });
      expect((await log.read(sid, 1, 10)).entries).toEqual([
        ...heldEvents.map((event, i) => ({ seq: 2 + i, turnId: "turn-a", event })),
        { seq: 5, turnId: "turn-a", event: completed(1) },
      ]);
      expect(await log.lastSeq(sid)).toBe(5);
    });

    test("a refused or replayed commit appends none of its held events", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      // Head conflict: the session is at 0, the commit expects 3.
      await expectTetherError(
        () => store.commit(commitDraft(sid, 3, { announce: withHeld(announcement(fence)) })),
        "head_revision_conflict",
      );
      expect(await types(sid)).toEqual([]);
      const draft = commitDraft(sid, 0, {
        stamp: stamped("turn-a"),
        announce: withHeld(announcement(fence, false)),
      });
      expect((await store.commit(draft)).announced).toMatchObject({ seq: 4 });
      expect((await store.commit(draft)).replayed).toBe(true);
      expect(await types(sid)).toEqual([
        "1:turn_started",
        "2:text_delta",
        "3:usage_reported",
        "4:turn_completed",
      ]);
    });

    test("keeps the lease while an input waits for the next turn, or when asked to", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      const kept = await store.commit(
        commitDraft(sid, 0, { announce: announcement(fence, false) }),
      );
      expect(kept.announced).toMatchObject({ seq: 1, released: false });
      await store.submitInput(inputDraft(sid, "next"));
      const waiting = await store.commit(commitDraft(sid, 1, { announce: announcement(fence) }));
      expect(waiting.announced).toMatchObject({ seq: 2, released: false });
      expect((await store.currentLease(sid))?.fencingToken).toBe(fence.fencingToken);
      expect(await types(sid)).toEqual(["1:turn_completed", "2:turn_completed"]);
    });

    test("keeps the lease while queued work waits, ready or claimed and not completed", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "queued"));
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      // The enqueue created the session (head 1).
      const ready = await store.commit(commitDraft(sid, 1, { announce: announcement(fence) }));
      expect(ready.announced).toMatchObject({ seq: 1, released: false });
      expect((await store.currentLease(sid))?.fencingToken).toBe(fence.fencingToken);
      // Taken by the holder and not completed by this commit: still the holder's to finish.
      const claim = await store.claimReadyWork(fence, "idle", 8);
      expect(claim?.batches.map((b) => b.payload)).toEqual(["queued"]);
      const claimed = await store.commit(commitDraft(sid, 2, { announce: announcement(fence) }));
      expect(claimed.announced).toMatchObject({ seq: 2, released: false });
      expect((await store.currentLease(sid))?.fencingToken).toBe(fence.fencingToken);
      // Completed in the announcing commit: nothing waits, and the lease goes in that step.
      const done = await store.commit(
        commitDraft(sid, 3, {
          completeQueueClaims: claim ? [queueClaimCompletion(claim)] : [],
          announce: announcement(fence),
        }),
      );
      expect(done.announced).toMatchObject({ seq: 3, released: true });
      expect(await store.currentLease(sid)).toBeUndefined();
    });

    test("a replayed commit appends nothing again", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      const draft = commitDraft(sid, 0, {
        stamp: stamped("turn-a"),
        announce: announcement(fence, false),
      });
      expect((await store.commit(draft)).announced).toMatchObject({ seq: 1, released: false });
      expect(await store.commit(draft)).toEqual({
        sessionId: sid,
        headRevision: 1,
        replayed: true,
      });
      expect(await types(sid)).toEqual(["1:turn_completed"]);
    });

    for (const kind of STALE_FENCE_KINDS) {
      test(`a fence that is ${kind.name} commits and appends nothing, held events neither`, async () => {
        const h = harness();
        const sid = freshSessionId();
        const held = fenceOf(await acquire(h.store, sid, opaqueOwner("a"), LONG_TTL_MS));
        await kind.settle?.(h, [held]);
        const stale = await kind.make(h, held);
        await expectTetherError(
          () => h.store.commit(commitDraft(sid, 0, { announce: withHeld(announcement(stale)) })),
          "session_execution_lease_expired",
        );
        expect(await h.store.loadSession(sid)).toBeUndefined();
        expect(await h.log.lastSeq(sid)).toBe(0);
      });
    }

    test("a turn start says where the log ended in its step (ADR 0023)", async () => {
      const { store, log } = harness();
      const start = store.startTurn?.bind(store);
      if (!start) throw new Error("this backend has no startTurn");
      const sid = freshSessionId();
      const claim = { owner: opaqueOwner("a"), ttlMs: LONG_TTL_MS, maxInputs: 1 };
      const first = await start(inputDraft(sid, "one"), claim);
      expect(first.logEnd).toBe(0);
      await log.append(sid, [
        { turnId: "turn-a", event: { type: "text_delta", text: "a" } },
        { turnId: "turn-a", event: { type: "text_delta", text: "b" } },
      ]);
      // Busy (the first start holds the lease): only the submit, and still the log's end.
      const second = await start(inputDraft(sid, "two"), claim);
      expect(second.started).toBeUndefined();
      expect(second.logEnd).toBe(2);
    });
  });
}
