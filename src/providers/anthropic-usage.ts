// Anthropic's usage block in Tether's terms, for the Messages provider and native compaction.
import type { UsageTotals } from "../domain/usage.js";

/** Anthropic's usage block as Tether counts it (a message's, or a compaction's). */
export function usageOf(u: {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}): UsageTotals {
  return {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadTokens: u.cache_read_input_tokens ?? 0,
    cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
    reasoningTokens: 0,
  };
}
