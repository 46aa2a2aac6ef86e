// Measures every model call of a turn around the provider: duration, time to the first stream
// event, tokens and why a call failed. It wraps the provider the engine sees, so retries count as
// calls of their own and the engine stays free of clocks. Labels are bounded by the receiver.
import type { SessionId } from "../../domain/ids.js";
import type { UsageTotals } from "../../domain/usage.js";
import {
  ProviderError,
  type ModelCall,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
} from "../../ports/model-provider.js";
import type { RuntimeMetrics } from "../deps.js";
import { providerExtras } from "../../ports/provider-extras.js";

/** Monotonic seconds; injectable so tests read literal durations. */
export type SecondsClock = () => number;

const monotonicSeconds: SecondsClock = () => performance.now() / 1000;

/**
 * `provider` measured for the turns of `sessionId`; the provider itself when nothing listens.
 * Wrap the vendor's provider directly (innermost), so what other decorators refuse before a call
 * is not counted as one.
 */
export function withModelCallMetrics(
  provider: ModelProvider,
  metrics: RuntimeMetrics | undefined,
  sessionId: SessionId,
  now: SecondsClock = monotonicSeconds,
): ModelProvider {
  const observe = metrics?.observeModelCall?.bind(metrics);
  if (!observe) return provider;
  return {
    name: provider.name,
    capabilities: provider.capabilities,
    ...providerExtras(provider),
    call(request: ModelRequest): ModelCall {
      const started = now();
      let firstChunk: number | undefined;
      let streamed: UsageTotals | undefined;
      let reported = false;
      const report = (usage: UsageTotals | undefined, errorType: string | undefined): void => {
        if (reported) return;
        reported = true;
        observe({
          sessionId,
          provider: provider.name,
          model: request.options.model,
          seconds: now() - started,
          firstChunkSeconds: firstChunk === undefined ? undefined : firstChunk - started,
          // As the GenAI conventions count input: cache reads and writes included.
          inputTokens: usage
            ? usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
            : 0,
          outputTokens: usage?.outputTokens ?? 0,
          errorType,
        });
      };
      let inner: ModelCall;
      try {
        inner = provider.call(request);
      } catch (error) {
        report(undefined, errorTypeOf(error, request.signal));
        throw error;
      }
      const throwInto = inner.throw?.bind(inner);
      const step = async (
        advance: () => Promise<IteratorResult<ModelStreamEvent, ModelResponse>>,
      ): Promise<IteratorResult<ModelStreamEvent, ModelResponse>> => {
        try {
          const result = await advance();
          if (result.done) {
            report(finalUsage(result.value?.usage, streamed), undefined);
          } else {
            firstChunk ??= now();
            if (result.value.type === "usage") streamed = result.value.usage;
          }
          return result;
        } catch (error) {
          report(streamed, errorTypeOf(error, request.signal));
          throw error;
        }
      };
      return {
        next: () => step(() => inner.next()),
        // The engine stops reading (a cancel): the call ended without an answer.
        return: (value?: ModelResponse | PromiseLike<ModelResponse>) =>
          step(async () => {
            report(streamed, "cancelled");
            return inner.return ? inner.return(value) : { done: true, value: value as never };
          }),
        ...(throwInto && { throw: (e?: unknown) => step(() => throwInto(e)) }),
      };
    },
  };
}

/** As the engine counts it: the final response's usage when non-zero, else the streamed one. */
function finalUsage(
  final: UsageTotals | undefined,
  streamed: UsageTotals | undefined,
): UsageTotals | undefined {
  const zero = !final || (final.inputTokens === 0 && final.outputTokens === 0);
  return zero ? (streamed ?? final) : final;
}

/**
 * A bounded name for a failure: the HTTP status a provider answered, "transport" when it
 * answered none, "cancelled" when the turn aborted the call, "_OTHER" for anything else (the
 * OpenTelemetry fallback), so a message never becomes a label.
 */
export function errorTypeOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "cancelled";
  if (error instanceof ProviderError) {
    return error.status === undefined ? "transport" : String(error.status);
  }
  return "_OTHER";
}
