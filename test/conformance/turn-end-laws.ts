// A turn's end as a client sees it (issue 35): once a commit has announced a turn's
// turn_completed, nothing of that turn holds the session. The announcing commit closes the
// turn's client tool calls in its own step (ADR 0023), so it can release the lease there even
// for a turn that waited on the client, and a rewind or a compaction's claim, sent the moment
// the completion is seen, finds the session at rest. Needs a store paired with its log: run by
// event-log.test.ts on memory, Redis and Cluster, and by redis-replicated.test.ts with durability
// replicated (the wire takes no announcement: its runtime announces after the commit).
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../src/domain/ids.js";
import { fenceOf, type LeaseFence } from "../../src/domain/lease.js";
import type { SessionEvent } from "../../src/domain/session-events.js";
import type { ToolWait } from "../../src/domain/tool-calls.js";
import type { RuntimeStore } from "../../src/ports/runtime-store.js";
import type { EventLogFactory } from "./event-log-laws.js";
import { acquire } from "./support/expectations.js";
import { commitDraft, freshSessionId, LONG_TTL_MS, opaqueOwner } from "./support/fixtures.js";
import { useStoreHarness } from "./support/store-factory.js";

const TURN = "turn-t";
const call = (callId: string): ToolWait => ({ kind: "result", callId });

const completed = (headRevision: number): SessionEvent => ({
  type: "turn_completed",
  outcome: { kind: "finished", reason: "assistant_message", text: "done" },
  headRevision,
  usage: {
    inputTokens: 1,
    outputTokens: 1,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  },
  fencingToken: 1,
});

/** The turn's commit as the runtime sends it: announced, releasing if nothing waits. */
function announcedCommit(fence: LeaseFence, expected: number, parkedTurnId?: string) {
  return commitDraft(fence.sessionId, expected, {
    appendMessages: ["u", "a"],
    advanceTurn: true,
    ...(parkedTurnId !== undefined && { parkedTurnId }),
    announce: {
      fence,
      turnId: TURN,
      eventJson: JSON.stringify(completed(expected + 1)),
      releaseIfIdle: true,
    },
  });
}

/** What a rewind and a compaction need: no live lease (its claim is not busy), no parked turn. */
async function expectAtRest(store: RuntimeStore, sid: SessionId, head: number): Promise<void> {
  expect(await store.currentLease(sid)).toBeUndefined();
  const compaction = await store.tryClaimLease(sid, opaqueOwner("compaction"), LONG_TTL_MS);
  expect(compaction.kind).not.toBe("busy");
  if (compaction.kind !== "busy") await store.releaseLease(fenceOf(compaction.lease));
  const rewound = await store.rewindSession({
    sessionId: sid,
    toRevision: 1,
    expectedHeadRevision: head,
  });
  expect(rewound.headRevision).toBe(head + 1);
}

export function describeTurnEndLaws(factory: EventLogFactory): void {
  describe("a turn's end as the client sees it (issue 35)", () => {
    const harness = useStoreHarness(factory);

    test("a commit announcing a turn that waited on the client closes its calls and leaves the session at rest", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["first"] }));
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await store.recordToolCalls(fence, TURN, [call("c1"), call("c2")]);
      await store.answerToolCalls(sid, TURN, [{ callId: "c1", output: "42", isError: false }]);
      const receipt = await store.commit(announcedCommit(fence, 1));
      expect(receipt.announced?.released).toBe(true);
      // In the commit's step: the answered call keeps its answer, the open one is closed.
      expect(await store.readToolCalls(sid, TURN)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ callId: "c1", status: "answered" }),
          { kind: "result", callId: "c2", status: "closed" },
        ]),
      );
      expect(
        await store.answerToolCalls(sid, TURN, [{ callId: "c2", output: "late", isError: false }]),
      ).toEqual({
        accepted: [],
        ignored: ["c2"],
      });
      await expectAtRest(store, sid, 2);
    });

    test("the same for a turn that parked on the client and was resumed by another holder", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["first"] }));
      const first = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await store.recordToolCalls(first, TURN, [call("c1")]);
      await store.parkTurn(first, {
        turnId: TURN,
        waitingOn: [call("c1")],
        progress: "{}",
        inputIds: [],
        batchIds: [],
        ttlMs: LONG_TTL_MS,
      });
      await store.answerToolCalls(sid, TURN, [{ callId: "c1", output: "42", isError: false }]);
      const next = fenceOf(await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS));
      expect((await store.resumeTurn(next, TURN))?.status).toBe("answered");
      // The resumed run asked the client again before it finished (a second call, still open).
      await store.recordToolCalls(next, TURN, [call("c2")]);
      const receipt = await store.commit(announcedCommit(next, 1, TURN));
      expect(receipt.announced?.released).toBe(true);
      expect(await store.readParkedTurn(sid)).toBeUndefined();
      expect(await store.readToolCalls(sid, TURN)).toContainEqual({
        kind: "result",
        callId: "c2",
        status: "closed",
      });
      await expectAtRest(store, sid, 2);
    });
  });
}
