// Transcript marks: a reader that holds the first n messages of a transcript loads only what
// follows, and never a suffix of another transcript (another epoch, a shorter transcript).
import { describe, expect, test } from "vitest";
import { expectTetherError } from "../support/expectations.js";
import { commitDraft, freshSessionId, inputDraft } from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeTranscriptMarkLaws(factory: StoreFactory): void {
  describe("transcript marks", () => {
    const harness = useStoreHarness(factory);

    test("a load without a mark is the whole transcript, with its epoch", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["a", "b"] }));
      const snapshot = await store.loadSession(sid);
      expect(snapshot?.messages).toEqual(["a", "b"]);
      expect(snapshot?.messagesFrom).toBe(0);
      expect(snapshot?.transcriptEpoch).not.toBe("");
    });

    test("a mark of the current epoch loads only the messages after it", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["a", "b"] }));
      const first = await store.loadSession(sid);
      const epoch = first?.transcriptEpoch ?? "";
      await store.commit(commitDraft(sid, 1, { appendMessages: ["c"] }));
      await store.commit(commitDraft(sid, 2, { appendMessages: ["d", "e"] }));
      const later = await store.loadSession(sid, { epoch, messageCount: 2 });
      expect(later?.transcriptEpoch).toBe(epoch);
      expect(later?.messagesFrom).toBe(2);
      expect(later?.messages).toEqual(["c", "d", "e"]);
      expect(later?.headRevision).toBe(3);
      const none = await store.loadSession(sid, { epoch, messageCount: 5 });
      expect(none?.messagesFrom).toBe(5);
      expect(none?.messages).toEqual([]);
    });

    test("a mark past the transcript's end or of another epoch loads it whole", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["a"] }));
      const epoch = (await store.loadSession(sid))?.transcriptEpoch ?? "";
      const past = await store.loadSession(sid, { epoch, messageCount: 2 });
      expect(past?.messagesFrom).toBe(0);
      expect(past?.messages).toEqual(["a"]);
      const other = await store.loadSession(sid, { epoch: `${epoch}x`, messageCount: 1 });
      expect(other?.messagesFrom).toBe(0);
      expect(other?.messages).toEqual(["a"]);
    });

    test("a session deleted and created again has another epoch: an old mark loads it whole", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["old-1", "old-2"] }));
      const old = (await store.loadSession(sid))?.transcriptEpoch ?? "";
      expect(await store.deleteSession(sid)).toBe(true);
      await store.commit(commitDraft(sid, 0, { appendMessages: ["new-1", "new-2", "new-3"] }));
      const again = await store.loadSession(sid, { epoch: old, messageCount: 2 });
      expect(again?.transcriptEpoch).not.toBe(old);
      expect(again?.messagesFrom).toBe(0);
      expect(again?.messages).toEqual(["new-1", "new-2", "new-3"]);
    });

    test("a session created by its first input has an epoch that its first commit keeps", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "hi", { kind: "next_turn" }));
      const created = await store.loadSession(sid);
      expect(created?.transcriptEpoch).not.toBe("");
      await store.commit(commitDraft(sid, 1, { appendMessages: ["a"] }));
      const committed = await store.loadSession(sid, {
        epoch: created?.transcriptEpoch ?? "",
        messageCount: 0,
      });
      expect(committed?.transcriptEpoch).toBe(created?.transcriptEpoch);
      expect(committed?.messages).toEqual(["a"]);
    });

    test("a malformed mark is invalid_argument naming the field", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["a"] }));
      await expectTetherError(
        () => store.loadSession(sid, { epoch: "e", messageCount: -1 }),
        "invalid_argument",
      );
    });
  });
}
