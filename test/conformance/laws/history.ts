// A session's history: every revision stays readable (also those a rewind left behind), a rewind
// is one commit restoring an earlier transcript under a head CAS and only while no turn is in
// progress, and a fork is a new session starting from any revision of another, which it leaves
// untouched. Every law runs on memory, Redis, Redis Cluster and the wire.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { acquire, expectTetherError, violationFields } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

/** A session with one commit per entry of `turns` (each turn appends its messages). */
async function sessionWith(store: RuntimeStore, turns: string[][]): Promise<SessionId> {
  const sid = freshSessionId();
  for (const [i, messages] of turns.entries()) {
    await store.commit(commitDraft(sid, i, { appendMessages: messages, advanceTurn: i > 0 }));
  }
  return sid;
}

const messagesAt = async (store: RuntimeStore, sid: SessionId, revision: number) =>
  (await store.readRevision(sid, revision)).messages;

export function describeHistoryLaws(factory: StoreFactory): void {
  describe("history, rewind and fork", () => {
    const harness = useStoreHarness(factory);

    test("every revision reads as it was committed: transcript, turn index, metadata", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { metadataPatch: { k: "one", gone: "x" } }));
      await store.commit(commitDraft(sid, 1, { appendMessages: ["u1", "a1"], advanceTurn: true }));
      await store.commit(commitDraft(sid, 2, { metadataPatch: { k: "two", gone: "" } }));
      await store.commit(commitDraft(sid, 3, { appendMessages: ["u2", "a2"], advanceTurn: true }));
      expect(await store.readRevision(sid, 1)).toMatchObject({
        revision: 1,
        headRevision: 4,
        turnIndex: 0,
        messages: [],
        metadata: { k: "one", gone: "x" },
      });
      expect(await store.readRevision(sid, 2)).toMatchObject({
        turnIndex: 1,
        messages: ["u1", "a1"],
        metadata: { k: "one", gone: "x" },
      });
      expect((await store.readRevision(sid, 3)).metadata).toEqual({ k: "two" });
      expect(await store.readRevision(sid, 4)).toMatchObject({
        turnIndex: 2,
        messages: ["u1", "a1", "u2", "a2"],
        metadata: { k: "two" },
      });
    });

    test("a session its first input created reads empty at revision 1", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "hello"));
      expect(await store.readRevision(sid, 1)).toMatchObject({ messages: [], turnIndex: 0 });
      await store.commit(commitDraft(sid, 1, { appendMessages: ["u", "a"], advanceTurn: true }));
      expect(await messagesAt(store, sid, 1)).toEqual([]);
      expect(await messagesAt(store, sid, 2)).toEqual(["u", "a"]);
    });

    test("a revision past the head is out of range; an unknown session is not found", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u", "a"]]);
      await expectTetherError(() => store.readRevision(sid, 3), "revision_out_of_range");
      await expectTetherError(
        () => store.rewindSession({ sessionId: sid, toRevision: 3, expectedHeadRevision: 2 }),
        "revision_out_of_range",
      );
      await expectTetherError(
        () => store.forkSession({ sourceId: sid, atRevision: 3, targetId: freshSessionId() }),
        "revision_out_of_range",
      );
      await expectTetherError(() => store.readRevision(freshSessionId(), 1), "session_not_found");
    });

    test("a rewind commits the earlier transcript as a new revision; nothing before it changes", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"], ["u2", "a2"], ["u3", "a3"]]);
      const before = await store.loadSession(sid);
      const receipt = await store.rewindSession({
        sessionId: sid,
        toRevision: 2,
        expectedHeadRevision: 4,
      });
      expect(receipt.headRevision).toBe(5);
      const after = await store.loadSession(sid);
      expect(after?.messages).toEqual(["u1", "a1"]);
      expect(after?.headRevision).toBe(5);
      // A rewind is not a turn, and a reader's cached transcript must not be extended.
      expect(after?.turnIndex).toBe(before?.turnIndex);
      expect(after?.transcriptEpoch).not.toBe(before?.transcriptEpoch);
      const since = await store.loadSession(sid, {
        epoch: before?.transcriptEpoch ?? "",
        messageCount: 6,
      });
      expect(since?.messagesFrom).toBe(0);
      expect(since?.messages).toEqual(["u1", "a1"]);
      // History is revisions: the rewound ones read as they were.
      expect(await messagesAt(store, sid, 4)).toEqual(["u1", "a1", "u2", "a2", "u3", "a3"]);
      expect(await messagesAt(store, sid, 3)).toEqual(["u1", "a1", "u2", "a2"]);
      // Turns go on from the rewound transcript.
      await store.commit(commitDraft(sid, 5, { appendMessages: ["u4", "a4"], advanceTurn: true }));
      expect((await store.loadSession(sid))?.messages).toEqual(["u1", "a1", "u4", "a4"]);
      expect(await messagesAt(store, sid, 5)).toEqual(["u1", "a1"]);
    });

    test("a rewind to a revision an earlier rewind left behind restores it, and rewinds nest", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"], ["u2", "a2"]]);
      await store.rewindSession({ sessionId: sid, toRevision: 1, expectedHeadRevision: 3 });
      await store.commit(commitDraft(sid, 4, { appendMessages: ["v1", "b1"], advanceTurn: true }));
      // Back to revision 3, which is not on the live line any more.
      await store.rewindSession({ sessionId: sid, toRevision: 3, expectedHeadRevision: 5 });
      expect((await store.loadSession(sid))?.messages).toEqual(["u1", "a1", "u2", "a2"]);
      await store.commit(commitDraft(sid, 6, { appendMessages: ["w1", "c1"], advanceTurn: true }));
      await store.rewindSession({ sessionId: sid, toRevision: 5, expectedHeadRevision: 7 });
      expect((await store.loadSession(sid))?.messages).toEqual(["v1", "b1"]);
      const expected: Record<number, string[]> = {
        1: [],
        2: ["u1", "a1"],
        3: ["u1", "a1", "u2", "a2"],
        4: [],
        5: ["v1", "b1"],
        6: ["u1", "a1", "u2", "a2"],
        7: ["u1", "a1", "u2", "a2", "w1", "c1"],
        8: ["v1", "b1"],
      };
      for (const [revision, messages] of Object.entries(expected)) {
        expect(await messagesAt(store, sid, Number(revision)), `revision ${revision}`).toEqual(
          messages,
        );
      }
    });

    test("a rewind names the head it read: a stale one is refused and changes nothing", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"], ["u2", "a2"]]);
      await expectTetherError(
        () => store.rewindSession({ sessionId: sid, toRevision: 2, expectedHeadRevision: 2 }),
        "head_revision_conflict",
      );
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () =>
          store.rewindSession({ sessionId: sid, toRevision: 2, expectedHeadRevision: 3 }),
        ),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect((await store.loadSession(sid))?.headRevision).toBe(4);
    });

    test("a rewind is refused while a lease is live or a turn is parked", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"]]);
      const lease = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      await expectTetherError(
        () => store.rewindSession({ sessionId: sid, toRevision: 1, expectedHeadRevision: 2 }),
        "turn_in_progress",
      );
      await store.recordToolCalls(fenceOf(lease), "turn-p", [{ kind: "result", callId: "c1" }]);
      await store.parkTurn(fenceOf(lease), {
        turnId: "turn-p",
        waitingOn: [{ kind: "result", callId: "c1" }],
        progress: "{}",
        inputIds: [],
        batchIds: [],
        ttlMs: LONG_TTL_MS,
      });
      await expectTetherError(
        () => store.rewindSession({ sessionId: sid, toRevision: 1, expectedHeadRevision: 2 }),
        "turn_in_progress",
      );
      expect((await store.loadSession(sid))?.messages).toEqual(["u1", "a1"]);
    });

    test("a fork copies a revision into a new session and leaves the source untouched", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { metadataPatch: { agent: "v1" } }));
      await store.commit(commitDraft(sid, 1, { appendMessages: ["u1", "a1"], advanceTurn: true }));
      await store.commit(commitDraft(sid, 2, { metadataPatch: { agent: "v2" } }));
      await store.commit(commitDraft(sid, 3, { appendMessages: ["u2", "a2"], advanceTurn: true }));
      const source = await store.loadSession(sid);
      const target = freshSessionId();
      expect(await store.forkSession({ sourceId: sid, atRevision: 2, targetId: target })).toEqual({
        sessionId: target,
        headRevision: 2,
      });
      const fork = await store.loadSession(target);
      expect(fork).toMatchObject({
        headRevision: 2,
        turnIndex: 1,
        messages: ["u1", "a1"],
        metadata: { agent: "v1" },
      });
      expect(fork?.transcriptEpoch).not.toBe(source?.transcriptEpoch);
      expect(await store.loadSession(sid)).toEqual(source);
      // The fork goes on on its own; revisions before its start belong to the source.
      await store.commit(commitDraft(target, 2, { appendMessages: ["x", "y"], advanceTurn: true }));
      expect(await messagesAt(store, target, 3)).toEqual(["u1", "a1", "x", "y"]);
      expect(await messagesAt(store, target, 2)).toEqual(["u1", "a1"]);
      await expectTetherError(() => store.readRevision(target, 1), "revision_unavailable");
      expect((await store.loadSession(sid))?.messages).toEqual(["u1", "a1", "u2", "a2"]);
    });

    test("a fork can start from a revision a rewind left behind", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"], ["u2", "a2"]]);
      await store.rewindSession({ sessionId: sid, toRevision: 1, expectedHeadRevision: 3 });
      const target = freshSessionId();
      await store.forkSession({ sourceId: sid, atRevision: 3, targetId: target });
      expect((await store.loadSession(target))?.messages).toEqual(["u1", "a1", "u2", "a2"]);
    });

    test("a fork into a session that exists is refused and changes neither", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"]]);
      const taken = await sessionWith(store, [[], ["t", "t"]]);
      await expectTetherError(
        () => store.forkSession({ sourceId: sid, atRevision: 2, targetId: taken }),
        "session_already_exists",
      );
      const queued = freshSessionId();
      await store.submitInput(inputDraft(queued, "waiting"));
      await expectTetherError(
        () => store.forkSession({ sourceId: sid, atRevision: 2, targetId: queued }),
        "session_already_exists",
      );
      expect((await store.loadSession(taken))?.messages).toEqual(["t", "t"]);
      // Of concurrent forks into one new id, exactly one wins.
      const target = freshSessionId();
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () =>
          store.forkSession({ sourceId: sid, atRevision: 2, targetId: target }),
        ),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    });

    test("bad input: revision 0 and a fork onto its own source are invalid_argument naming the field", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"]]);
      const cases: [() => Promise<unknown>, RegExp][] = [
        [() => store.readRevision(sid, 0), /revision$/u],
        [
          () => store.rewindSession({ sessionId: sid, toRevision: 0, expectedHeadRevision: 2 }),
          /to_revision$/u,
        ],
        [
          () => store.forkSession({ sourceId: sid, atRevision: 1, targetId: sid }),
          /new_session_id$/u,
        ],
      ];
      for (const [call, field] of cases) {
        const error = await expectTetherError(call, "invalid_argument");
        expect(violationFields(error).some((f) => field.test(f))).toBe(true);
      }
      expect((await store.loadSession(sid))?.headRevision).toBe(2);
    });

    test("a deleted session's history goes with it", async () => {
      const { store } = harness();
      const sid = await sessionWith(store, [[], ["u1", "a1"], ["u2", "a2"]]);
      await store.rewindSession({ sessionId: sid, toRevision: 2, expectedHeadRevision: 3 });
      await store.deleteSession(sid);
      await expectTetherError(() => store.readRevision(sid, 2), "session_not_found");
      await store.commit(commitDraft(sid, 0, { appendMessages: ["new"] }));
      expect(await messagesAt(store, sid, 1)).toEqual(["new"]);
    });
  });
}
