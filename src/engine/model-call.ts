// Model-call failures: 429, 5xx and transport failures are repeated with backoff (honouring
// retry-after) as long as nothing was forwarded; anything else ends the turn.
import type { ToolCallPart } from "../domain/conversation.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import { ProviderError, type ModelProvider, type ModelRequest } from "../ports/model-provider.js";
import type { Sleep } from "../ports/sleep.js";
import { errorMessage } from "./abort.js";
import { consumeModelCall, type ReconciledResponse, type TextForwarder } from "./reconcile.js";
import { decideRetry, type RetryPolicy } from "./retry.js";

export interface ModelCallContext extends TextForwarder {
  provider: ModelProvider;
  retry: RetryPolicy;
  random: () => number;
  sleep: Sleep;
  emit(event: TurnEvent): void | Promise<void>;
}

export type ModelCallOutcome =
  | { kind: "ok"; response: ReconciledResponse }
  | { kind: "cancelled"; forwardedText: string }
  | {
      kind: "failed";
      outcome: Extract<TurnOutcome, { kind: "failed" }>;
      forwardedText: string;
    };

/**
 * After a model call failed: repeats it while the policy allows, and says how the call ended.
 * The first attempt runs inline in the turn loop; only failures pay for this path.
 */
export async function recoverModelCall(
  ctx: ModelCallContext,
  request: ModelRequest,
  iteration: number,
  firstError: unknown,
  firstForwardedText: string,
): Promise<ModelCallOutcome> {
  const { signal } = request;
  let error = firstError;
  let forwardedText = firstForwardedText;
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) return { kind: "cancelled", forwardedText };
    const decision = decideRetry(error, attempt, forwardedText !== "", ctx.retry, ctx.random);
    if (!decision.retry) {
      return { kind: "failed", forwardedText, outcome: failure(error, attempt, decision.why) };
    }
    const status = error instanceof ProviderError ? error.status : undefined;
    await ctx.emit({
      type: "provider_retry",
      iteration,
      attempt,
      delayMs: decision.delayMs,
      ...(status === undefined ? {} : { status }),
      reason: errorMessage(error),
    });
    try {
      await ctx.sleep(decision.delayMs, signal);
    } catch {
      return { kind: "cancelled", forwardedText: "" };
    }
    if (signal.aborted) return { kind: "cancelled", forwardedText: "" };
    const progress = { forwardedText: "" };
    try {
      const response = await consumeModelCall(ctx.provider.call(request), ctx, progress);
      if (signal.aborted) return { kind: "cancelled", forwardedText: progress.forwardedText };
      return { kind: "ok", response: withCallIds(response, iteration) };
    } catch (err) {
      error = err;
      forwardedText = progress.forwardedText;
    }
  }
}

function failure(
  err: unknown,
  attempts: number,
  why: string | undefined,
): Extract<TurnOutcome, { kind: "failed" }> {
  if (err instanceof ProviderError) {
    return {
      kind: "failed",
      reason: "provider_error",
      ...(err.status === undefined ? {} : { status: err.status }),
      retryable: err.retryable,
      attempts,
      message: why === undefined ? err.message : `${err.message} (${why})`,
    };
  }
  // The port says adapters throw ProviderError; anything else escaping one is a defect there.
  return {
    kind: "failed",
    reason: "provider_error",
    retryable: false,
    attempts,
    message: errorMessage(err),
  };
}

/** Providers occasionally omit call ids; a stable synthetic one keeps call and result paired. */
export function withCallIds(response: ReconciledResponse, iteration: number): ReconciledResponse {
  if (response.parts.every((p) => p.type !== "tool_call" || p.callId !== "")) return response;
  let n = 0;
  const parts = response.parts.map((p) => {
    if (p.type !== "tool_call") return p;
    n++;
    const call: ToolCallPart = p.callId !== "" ? p : { ...p, callId: `call_${iteration}_${n}` };
    return call;
  });
  return { ...response, parts };
}
