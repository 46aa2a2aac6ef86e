// Session creation from head 0 (src/ports/session-creation.ts), the one function CreateSession,
// a StreamTurn that binds an agent and an agent schedule's fire call: it creates a session once,
// leaves an existing one as it was, and passes on any other refusal of the store.
import { describe, expect, test } from "vitest";
import { TetherError } from "../../../src/domain/errors.js";
import { parseSessionId } from "../../../src/domain/ids.js";
import type { RuntimeCommit } from "../../../src/domain/session.js";
import { createManualClock } from "../../../src/ports/clock.js";
import { createSessionIfAbsent } from "../../../src/ports/session-creation.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";

const id = parseSessionId("t1:s-1");

describe("createSessionIfAbsent", () => {
  test("creates the session at revision 1 with its metadata, once", async () => {
    const store = createMemoryStore({ clock: createManualClock() });
    expect(await createSessionIfAbsent(store, id, { topic: "x" })).toBe(true);
    expect(await createSessionIfAbsent(store, id, { topic: "y" })).toBe(false);
    const snapshot = await store.loadSession(id);
    expect(snapshot?.headRevision).toBe(1);
    expect(snapshot?.metadata).toEqual({ topic: "x" });
  });

  test("finds a session that has commits past its first", async () => {
    const store = createMemoryStore({ clock: createManualClock() });
    await createSessionIfAbsent(store, id);
    await store.commit({ sessionId: id, expectedHeadRevision: 1, appendMessages: ["m"] });
    expect(await createSessionIfAbsent(store, id, { topic: "x" })).toBe(false);
    expect((await store.loadSession(id))?.headRevision).toBe(2);
  });

  test("an empty patch commits no metadataPatch; a patch is passed as given", async () => {
    const commits: RuntimeCommit[] = [];
    const store = {
      commit: (commit: RuntimeCommit) => {
        commits.push(commit);
        return Promise.reject(new TetherError("head_revision_conflict", "taken"));
      },
    };
    expect(await createSessionIfAbsent(store, id)).toBe(false);
    expect(await createSessionIfAbsent(store, id, { a: "1" })).toBe(false);
    expect(commits).toEqual([
      { sessionId: id, expectedHeadRevision: 0, appendMessages: [] },
      { sessionId: id, expectedHeadRevision: 0, appendMessages: [], metadataPatch: { a: "1" } },
    ]);
  });

  test("any other refusal of the store is passed on", async () => {
    const store = {
      commit: () => Promise.reject(new TetherError("quota_exhausted", "too many keys")),
    };
    await expect(createSessionIfAbsent(store, id, { a: "1" })).rejects.toMatchObject({
      code: "quota_exhausted",
    });
  });
});
