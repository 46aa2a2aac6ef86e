// One model call with retries: 429, 5xx and transport failures are repeated with backoff
// (honouring retry-after) as long as nothing was forwarded; anything else ends the turn.
import type { ToolCallPart } from "../domain/conversation.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import { ProviderError, type ModelProvider, type ModelRequest } from "../ports/model-provider.js";
import type { Sleep } from "../ports/sleep.js";
import { errorMessage } from "./abort.js";
import { consumeModelCall, type ReconciledResponse } from "./reconcile.js";
import { decideRetry, type RetryPolicy } from "./retry.js";

export interface ModelCallContext {
  provider: ModelProvider;
  request: ModelRequest;
  iteration: number;
  retry: RetryPolicy;
  random: () => number;
  sleep: Sleep;
  emit: (event: TurnEvent) => Promise<void>;
}

export type ModelCallOutcome =
  | { kind: "ok"; response: ReconciledResponse }
  | { kind: "cancelled"; forwardedText: string }
  | {
      kind: "failed";
      outcome: Extract<TurnOutcome, { kind: "failed" }>;
      forwardedText: string;
    };

export async function callModelWithRetry(ctx: ModelCallContext): Promise<ModelCallOutcome> {
  const { signal } = ctx.request;
  const forward = (text: string): Promise<void> => ctx.emit({ type: "text_delta", text });
  for (let attempt = 1; ; attempt++) {
    const progress = { forwardedText: "" };
    try {
      const response = await consumeModelCall(ctx.provider.call(ctx.request), forward, progress);
      if (signal.aborted) return { kind: "cancelled", forwardedText: progress.forwardedText };
      return { kind: "ok", response: withCallIds(response, ctx.iteration) };
    } catch (err) {
      if (signal.aborted) return { kind: "cancelled", forwardedText: progress.forwardedText };
      const decision = decideRetry(
        err,
        attempt,
        progress.forwardedText !== "",
        ctx.retry,
        ctx.random,
      );
      if (!decision.retry) {
        return {
          kind: "failed",
          forwardedText: progress.forwardedText,
          outcome: failure(err, attempt),
        };
      }
      const status = err instanceof ProviderError ? err.status : undefined;
      await ctx.emit({
        type: "provider_retry",
        iteration: ctx.iteration,
        attempt,
        delayMs: decision.delayMs,
        ...(status === undefined ? {} : { status }),
        message: errorMessage(err),
      });
      try {
        await ctx.sleep(decision.delayMs, signal);
      } catch {
        return { kind: "cancelled", forwardedText: "" };
      }
      if (signal.aborted) return { kind: "cancelled", forwardedText: "" };
    }
  }
}

function failure(err: unknown, attempts: number): Extract<TurnOutcome, { kind: "failed" }> {
  if (err instanceof ProviderError) {
    return {
      kind: "failed",
      reason: "provider_error",
      ...(err.status === undefined ? {} : { status: err.status }),
      retryable: err.retryable,
      attempts,
      message: err.message,
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
function withCallIds(response: ReconciledResponse, iteration: number): ReconciledResponse {
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
