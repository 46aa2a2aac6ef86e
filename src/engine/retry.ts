// When a failed model call is repeated, and after how long.
import { ProviderError } from "../ports/model-provider.js";

export interface RetryPolicy {
  /** Attempts per model call, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A provider asking to wait longer than this is treated as a terminal failure. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
};

/** `why` explains a refusal the error itself does not (a wait longer than the policy allows). */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; why?: string };

/**
 * `attempt` is the number of the attempt that just failed (1-based). A call that already
 * forwarded text is never repeated: the client has seen it and a replay would duplicate it.
 */
export function decideRetry(
  err: unknown,
  attempt: number,
  forwardedOutput: boolean,
  policy: RetryPolicy,
  random: () => number,
): RetryDecision {
  if (!(err instanceof ProviderError) || !err.retryable || forwardedOutput) return { retry: false };
  if (attempt >= policy.maxAttempts) return { retry: false };
  if (err.retryAfterMs !== undefined) {
    if (err.retryAfterMs > policy.maxRetryAfterMs) {
      const asked = Math.ceil(err.retryAfterMs / 1000);
      const cap = Math.floor(policy.maxRetryAfterMs / 1000);
      return {
        retry: false,
        why: `the provider asked to wait ${asked} s before retrying, longer than the ${cap} s a turn waits`,
      };
    }
    return { retry: true, delayMs: Math.ceil(err.retryAfterMs) };
  }
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  // Equal jitter: at least half the exponential delay, so concurrent turns spread out.
  return { retry: true, delayMs: Math.round(exponential / 2 + (random() * exponential) / 2) };
}
