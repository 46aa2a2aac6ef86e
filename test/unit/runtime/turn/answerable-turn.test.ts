// Which turns take answers: the committed transcript says which turns have completed, and a turn
// that has is refused naming it; any other turn of an existing session is left to the store.
import { describe, expect, test } from "vitest";
import { isTetherError, type TetherError } from "../../../../src/domain/errors.js";
import { parseSessionId } from "../../../../src/domain/ids.js";
import { requireAnswerableTurn } from "../../../../src/runtime/turn/answerable-turn.js";
import { createMemoryStore } from "../../../../src/store/memory/memory-store.js";

const DONE = "turn-0123456789abcdef01234567";
const OTHER = "turn-fedcba9876543210fedcba98";

/** A session whose transcript holds one committed turn (DONE): its user and assistant message. */
async function setup() {
  const store = createMemoryStore();
  const sessionId = parseSessionId("s");
  await store.commit({ sessionId, expectedHeadRevision: 0, appendMessages: [] });
  await store.commit({
    sessionId,
    expectedHeadRevision: 1,
    // Literal committed messages, as a turn writes them: each names its turn and revision.
    appendMessages: [
      `{"role":"user","content":[{"type":"text","text":"what was ${OTHER}?"}],"turnId":"${DONE}","revision":2}`,
      `{"role":"assistant","parts":[{"type":"text","text":"no idea"}],"turnId":"${DONE}","revision":2}`,
    ],
  });
  return { store, sessionId };
}

async function refusal(work: Promise<void>): Promise<TetherError> {
  const error: unknown = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isTetherError(error)) throw new Error(`expected a TetherError, got ${String(error)}`);
  return error;
}

describe("requireAnswerableTurn", () => {
  test("a turn the transcript holds has completed: turn_not_running naming it", async () => {
    const { store, sessionId } = await setup();
    const error = await refusal(requireAnswerableTurn(store, sessionId, DONE));
    expect(error.code).toBe("turn_not_running");
    expect(error.message).toContain(DONE);
    expect(error.fields).toEqual({ turnId: DONE });
  });

  test("a turn the transcript does not hold is let through, also when a message mentions it", async () => {
    const { store, sessionId } = await setup();
    await expect(requireAnswerableTurn(store, sessionId, OTHER)).resolves.toBeUndefined();
    await expect(requireAnswerableTurn(store, sessionId, "turn-never")).resolves.toBeUndefined();
  });

  test("a session that does not exist is session_not_found", async () => {
    const { store } = await setup();
    const error = await refusal(requireAnswerableTurn(store, parseSessionId("nope"), DONE));
    expect(error.code).toBe("session_not_found");
  });
});
