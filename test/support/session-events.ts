// Session events tests write: non-text events, which the log holds as entries of their own (text
// deltas are coalesced into windows).
import type { SessionEvent } from "../../src/domain/session-events.js";

const ONE_EACH = {
  inputTokens: 1,
  outputTokens: 1,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};

export function usageReported(iteration = 1): SessionEvent {
  return { type: "usage_reported", usage: ONE_EACH, iteration };
}

/** A finished turn's completion naming the head its commit made. */
export function turnCompleted(headRevision: number, fencingToken: number): SessionEvent {
  return {
    type: "turn_completed",
    outcome: { kind: "finished", reason: "assistant_message", text: "done" },
    headRevision,
    usage: ONE_EACH,
    fencingToken,
  };
}
