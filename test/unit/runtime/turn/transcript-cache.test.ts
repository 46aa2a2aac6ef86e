// The replica's transcript cache loads only what was committed since it last read a session,
// and falls back to a whole load whenever its mark is not the store's transcript.
import { describe, expect, test } from "vitest";
import type { Message } from "../../../../src/domain/conversation.js";
import { parseSessionId } from "../../../../src/domain/ids.js";
import type { TranscriptMark } from "../../../../src/domain/session.js";
import type { RuntimeStore } from "../../../../src/ports/runtime-store.js";
import { encodeMessage } from "../../../../src/runtime/turn/message-codec.js";
import { createTranscriptCache } from "../../../../src/runtime/turn/transcript-cache.js";
import { createMemoryStore } from "../../../../src/store/memory/memory-store.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

/** The memory store, recording the mark of every load. */
function recordingStore(): { store: RuntimeStore; marks: (TranscriptMark | undefined)[] } {
  const store = createMemoryStore();
  const marks: (TranscriptMark | undefined)[] = [];
  const loadSession: RuntimeStore["loadSession"] = (id, since) => {
    marks.push(since);
    return store.loadSession(id, since);
  };
  return { store: { ...store, loadSession }, marks };
}

async function commitMessages(store: RuntimeStore, head: number, ...texts: string[]) {
  const sessionId = parseSessionId("s");
  await store.commit({
    sessionId,
    expectedHeadRevision: head,
    appendMessages: texts.map((t) => encodeMessage(user(t))),
  });
}

describe("transcript cache", () => {
  const sid = parseSessionId("s");

  test("the first load is whole; later loads ask only for what follows and see it all", async () => {
    const { store, marks } = recordingStore();
    const cache = createTranscriptCache(store);
    await commitMessages(store, 0, "a", "b");
    const first = await cache.load(sid);
    expect(first.history).toEqual([user("a"), user("b")]);
    expect(marks[0]).toBeUndefined();

    await commitMessages(store, 1, "c");
    const second = await cache.load(sid);
    expect(second.history).toEqual([user("a"), user("b"), user("c")]);
    expect(second.snapshot?.headRevision).toBe(2);
    expect(marks[1]).toEqual({ epoch: first.snapshot?.transcriptEpoch, messageCount: 2 });
    expect(second.snapshot?.messages).toHaveLength(1);
  });

  test("a session deleted and created again is read whole, not appended to the old one", async () => {
    const { store } = recordingStore();
    const cache = createTranscriptCache(store);
    await commitMessages(store, 0, "old-1", "old-2");
    await cache.load(sid);
    await store.deleteSession(sid);
    await commitMessages(store, 0, "new-1", "new-2", "new-3");
    expect((await cache.load(sid)).history).toEqual([user("new-1"), user("new-2"), user("new-3")]);
  });

  test("a missing session loads as empty and is forgotten", async () => {
    const { store, marks } = recordingStore();
    const cache = createTranscriptCache(store);
    expect(await cache.load(sid)).toEqual({ snapshot: undefined, history: [] });
    await commitMessages(store, 0, "a");
    expect((await cache.load(sid)).history).toEqual([user("a")]);
    expect(marks).toEqual([undefined, undefined]);
  });

  test("holds at most `capacity` sessions, dropping the least recently loaded", async () => {
    const { store, marks } = recordingStore();
    const cache = createTranscriptCache(store, 2);
    const ids = ["x", "y", "z"].map((id) => parseSessionId(id));
    for (const id of ids) {
      await store.commit({ sessionId: id, expectedHeadRevision: 0, appendMessages: ["{}"] });
      await cache.load(id);
    }
    marks.length = 0;
    await cache.load(ids[0]!);
    await cache.load(ids[2]!);
    expect(marks[0]).toBeUndefined();
    expect(marks[1]).toMatchObject({ messageCount: 1 });
  });
});
