// The turn loop: model call, tool calls, checkpoint, repeat, until exactly one terminal outcome
// (DESIGN.md section 4). Pure: time and waiting come from ports, I/O from the provider and tools.
import {
  invalidTurnInput,
  validateInputItems,
  DEFAULT_INPUT_LIMITS,
  type InputItem,
  type InputLimits,
  type Message,
  type ToolCallPart,
} from "../domain/conversation.js";
import type { TurnCheckpoint } from "../domain/inputs.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import { addUsage, budgetTokens, ZERO_USAGE, type UsageTotals } from "../domain/usage.js";
import type { TurnCheckpointHost } from "../ports/checkpoint-host.js";
import type { TurnEventSink } from "../ports/event-sink.js";
import type { ModelCallOptions, ModelProvider } from "../ports/model-provider.js";
import type { Sleep } from "../ports/sleep.js";
import type { ToolExecutor } from "../ports/tool-executor.js";
import { ABORTED, errorMessage, raceAbort } from "./abort.js";
import { callModelWithRetry } from "./model-call.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";
import { dispatchToolCalls, type ToolCallRecord } from "./tool-dispatch.js";
import { createProviderView, type ProviderView } from "./provider-view.js";

export type { ToolCallRecord };

export interface TurnEngineOptions {
  provider: ModelProvider;
  tools?: ToolExecutor;
  checkpoints?: TurnCheckpointHost;
  /** Retry backoff and tool timeouts wait through this; the engine has no timers of its own. */
  sleep: Sleep;
  /** Jitter source for retry backoff; defaults to Math.random. */
  random?: () => number;
  model?: ModelCallOptions;
  /** Sent to the provider ahead of the conversation; not part of the turn's messages. */
  systemPrompt?: string;
  /** Model calls per turn. Default 25. */
  maxIterations?: number;
  /** Tokens per turn (see budgetTokens); no new model call starts once reached. */
  tokenBudget?: number;
  /** Per tool call; 0 disables. Default 120 s. */
  toolTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  inputLimits?: InputLimits;
}

export interface TurnRequest {
  turnId: string;
  /** The committed conversation the turn continues. */
  history?: readonly Message[];
  input: readonly InputItem[];
  signal?: AbortSignal;
  sink?: TurnEventSink;
  /** Per-turn overrides of the engine's limits. */
  maxIterations?: number;
  tokenBudget?: number;
}

export interface TurnResult {
  turnId: string;
  outcome: TurnOutcome;
  /** Messages this turn appended, starting with its input; valid to send to a provider as is. */
  messages: Message[];
  /** Text of the last assistant message. */
  assistantText: string;
  toolCalls: ToolCallRecord[];
  usage: UsageTotals;
  /** Model calls made. */
  iterations: number;
}

export interface TurnEngine {
  /** Rejects only for invalid input (before any event) or a failing sink. */
  runTurn(request: TurnRequest): Promise<TurnResult>;
}

const NEVER_ABORTED = new AbortController().signal;
const NO_SINK: TurnEventSink = { emit: () => undefined };

export function createTurnEngine(options: TurnEngineOptions): TurnEngine {
  const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const random = options.random ?? Math.random;
  const limits = options.inputLimits ?? DEFAULT_INPUT_LIMITS;
  const toolTimeoutMs = options.toolTimeoutMs ?? 120_000;
  const definitions = options.tools?.definitions() ?? [];
  const knownTools = new Set(definitions.map((d) => d.name));

  async function runTurn(request: TurnRequest): Promise<TurnResult> {
    const violations = validateInputItems(request.input, limits);
    if (violations.length > 0) throw invalidTurnInput(violations);

    const signal = request.signal ?? NEVER_ABORTED;
    const sink = request.sink ?? NO_SINK;
    const maxIterations = request.maxIterations ?? options.maxIterations ?? 25;
    const tokenBudget = request.tokenBudget ?? options.tokenBudget;
    const view: ProviderView = createProviderView(
      options.provider.capabilities,
      options.systemPrompt,
      request.history ?? [],
    );
    const messages: Message[] = [];
    const toolCalls: ToolCallRecord[] = [];
    let total = ZERO_USAGE;
    let iterations = 0;
    let assistantText = "";

    const emit = async (event: TurnEvent): Promise<void> => {
      const r = sink.emit(event);
      if (r !== undefined) await r;
    };
    const append = (message: Message): void => {
      messages.push(message);
      view.append(message);
    };

    /** Admitted input at a checkpoint, appended as user messages; undefined when cancelled. */
    const admit = async (checkpoint: TurnCheckpoint): Promise<number | undefined> => {
      const host = options.checkpoints;
      if (host === undefined) return 0;
      const admitted = await raceAbort(
        host.checkpoint({ turnId: request.turnId, checkpoint, iteration: iterations, signal }),
        signal,
      );
      if (admitted === ABORTED) return undefined;
      if (admitted.length === 0) return 0;
      for (const a of admitted) append({ role: "user", content: [...a.items] });
      await emit({ type: "input_admitted", checkpoint, sources: admitted.map((a) => a.source) });
      return admitted.length;
    };

    const loop = async (): Promise<TurnOutcome> => {
      for (;;) {
        if (signal.aborted) return { kind: "stopped", reason: "cancelled" };
        if (iterations >= maxIterations) {
          return { kind: "stopped", reason: "max_iterations", iterations };
        }
        if (tokenBudget !== undefined && budgetTokens(total) >= tokenBudget) {
          return {
            kind: "stopped",
            reason: "budget_exhausted",
            usedTokens: budgetTokens(total),
            budgetTokens: tokenBudget,
          };
        }
        iterations++;
        const called = await callModelWithRetry({
          provider: options.provider,
          request: {
            messages: view.messages,
            tools: definitions,
            options: options.model ?? {},
            signal,
          },
          iteration: iterations,
          retry,
          random,
          sleep: options.sleep,
          emit,
        });
        if (called.kind === "cancelled" || called.kind === "failed") {
          // Keep what the client already saw, so the stored history matches the stream.
          if (called.forwardedText !== "") {
            assistantText = called.forwardedText;
            append({ role: "assistant", parts: [{ type: "text", text: called.forwardedText }] });
          }
          return called.kind === "cancelled"
            ? { kind: "stopped", reason: "cancelled" }
            : called.outcome;
        }
        const response = called.response;
        total = addUsage(total, response.usage);
        await emit({ type: "usage", iteration: iterations, usage: response.usage, total });
        append({ role: "assistant", parts: response.parts });
        assistantText = response.text;

        const calls = response.parts.filter((p): p is ToolCallPart => p.type === "tool_call");
        if (calls.length === 0) {
          const admitted = await admit("before_completion");
          if (admitted === undefined) return { kind: "stopped", reason: "cancelled" };
          if (admitted > 0) continue;
          await emit({ type: "final_value", text: response.text });
          return { kind: "finished", reason: "assistant_message", text: response.text };
        }

        const records = await dispatchToolCalls(calls, {
          executor: options.tools,
          knownTools,
          turnId: request.turnId,
          signal,
          sleep: options.sleep,
          timeoutMs: toolTimeoutMs,
          emit,
        });
        for (const r of records) {
          toolCalls.push(r);
          append({
            role: "tool",
            callId: r.callId,
            toolName: r.toolName,
            content: r.content,
            isError: r.status !== "ok",
          });
        }
        if (signal.aborted) return { kind: "stopped", reason: "cancelled" };

        // Rule 7: the first control in call order decides, once the whole batch is done.
        const controlled = records.find((r) => r.control !== undefined);
        const control = controlled?.control;
        if (controlled !== undefined && control !== undefined) {
          if (control.type === "finish") {
            await emit({
              type: "tool_value",
              toolName: controlled.toolName,
              callId: controlled.callId,
              value: control.value,
            });
            return {
              kind: "finished",
              reason: "tool_value",
              toolName: controlled.toolName,
              callId: controlled.callId,
              value: control.value,
            };
          }
          return {
            kind: "stopped",
            reason: "tool_error",
            toolName: controlled.toolName,
            callId: controlled.callId,
            code: control.code,
            message: control.message,
          };
        }
        if ((await admit("after_work")) === undefined) {
          return { kind: "stopped", reason: "cancelled" };
        }
      }
    };

    append({ role: "user", content: [...request.input] });
    let outcome: TurnOutcome;
    try {
      outcome = await loop();
    } catch (err) {
      outcome = signal.aborted
        ? { kind: "stopped", reason: "cancelled" }
        : { kind: "failed", reason: "internal", message: errorMessage(err) };
    }
    await emit({ type: "terminal", outcome });
    return {
      turnId: request.turnId,
      outcome,
      messages,
      assistantText,
      toolCalls,
      usage: total,
      iterations,
    };
  }

  return { runTurn };
}
