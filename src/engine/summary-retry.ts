// One summary request (Tether's own summary call or the provider's native compaction) under the
// provider retry policy: retried while the policy allows, reported as provider_retry events,
// ending as the compaction result the turn acts on when it cannot be had.
import type { TurnOutcome } from "../domain/turn-outcome.js";
import { ProviderError } from "../ports/model-provider.js";
import { errorMessage } from "./abort.js";
import type { CompactionContext } from "./compaction-types.js";
import { decideRetry } from "./retry.js";

export type SummaryFailure =
  | { kind: "cancelled" }
  | {
      kind: "failed";
      outcome: Extract<TurnOutcome, { kind: "failed" }>;
      /** Retrying could not help: the provider refused the request itself. */
      refused: boolean;
    };

export async function withSummaryRetry<T>(
  ctx: CompactionContext,
  iteration: number,
  attempt: () => Promise<T>,
): Promise<T | SummaryFailure> {
  for (let n = 1; ; n++) {
    if (ctx.signal.aborted) return { kind: "cancelled" };
    try {
      const value = await attempt();
      if (ctx.signal.aborted) return { kind: "cancelled" };
      return value;
    } catch (error) {
      if (ctx.signal.aborted) return { kind: "cancelled" };
      // Nothing of a summary reaches the client, so a partly streamed one may be repeated.
      const decision = decideRetry(error, n, false, ctx.retry, ctx.random);
      if (!decision.retry) {
        const why = decision.why === undefined ? "" : ` (${decision.why})`;
        return {
          kind: "failed",
          refused: error instanceof ProviderError && !error.retryable,
          outcome: {
            kind: "failed",
            reason: "compaction_failed",
            attempts: n,
            message: `the summary call failed: ${errorMessage(error)}${why}`,
          },
        };
      }
      await ctx.emit({
        type: "provider_retry",
        iteration,
        attempt: n,
        delayMs: decision.delayMs,
        reason: `summary call: ${errorMessage(error)}`,
      });
      try {
        await ctx.sleep(decision.delayMs, ctx.signal);
      } catch {
        return { kind: "cancelled" };
      }
    }
  }
}

export const isSummaryFailure = (value: unknown): value is SummaryFailure =>
  typeof value === "object" &&
  value !== null &&
  "kind" in value &&
  (value.kind === "cancelled" || value.kind === "failed");
