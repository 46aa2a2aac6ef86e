// Token usage arithmetic for one model call and a whole turn. The shape is the session's
// UsageTotals, so a turn's total lands in a commit unchanged.
import { ZERO_USAGE, type UsageTotals } from "./session.js";

export type { UsageTotals };
export { ZERO_USAGE };

export function addUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

/** A usage report with every counter at zero carries no information (a provider omitted it). */
export function isZeroUsage(u: UsageTotals | undefined): boolean {
  return (
    u === undefined ||
    (u.inputTokens === 0 &&
      u.outputTokens === 0 &&
      u.cacheReadTokens === 0 &&
      u.cacheWriteTokens === 0 &&
      u.reasoningTokens === 0)
  );
}

/**
 * Tokens counted against a turn's cap and a tenant's token quotas: everything read and written,
 * cache reads included.
 */
export function countedTokens(u: UsageTotals): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}

export function usage(partial: Partial<UsageTotals>): UsageTotals {
  return { ...ZERO_USAGE, ...partial };
}
