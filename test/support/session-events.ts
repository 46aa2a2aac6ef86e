// Session events the runtime's unit tests write: a non-text event, which the log holds as its
// own entry (text deltas are coalesced into windows).
import type { SessionEvent } from "../../src/domain/session-events.js";

export function usageReported(iteration = 1): SessionEvent {
  return {
    type: "usage_reported",
    usage: {
      inputTokens: 1,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
    iteration,
  };
}
