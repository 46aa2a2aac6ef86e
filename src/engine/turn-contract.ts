// What the turn engine takes and gives: its options, one turn's request and result, and the
// progress a parked turn continues from.
import type { ContextPolicy } from "../domain/compaction.js";
import type { InputItem, InputLimits, Message, ToolCallPart } from "../domain/conversation.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import type { UsageTotals } from "../domain/usage.js";
import type { TurnCheckpointHost } from "../ports/checkpoint-host.js";
import type { TurnEventSink } from "../ports/event-sink.js";
import type { ModelCallOptions, ModelProvider } from "../ports/model-provider.js";
import type { Sleep } from "../ports/sleep.js";
import type { BudgetGuard } from "../ports/budget-guard.js";
import type { ToolExecutor } from "../ports/tool-executor.js";
import type { RetryPolicy } from "./retry.js";
import type { ToolCallRecord } from "./tool-dispatch.js";

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
  /** Tokens per turn (see countedTokens); no new model call starts once reached. */
  maxTurnTokens?: number;
  /** The session and tenant budgets (ADR 0016): asked before every model call, told after it. */
  budgetGuard?: BudgetGuard;
  /** Per tool call; 0 disables. Default 120 s. */
  toolTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  inputLimits?: InputLimits;
  /**
   * Checks the final answer (a turn with a response format): undefined accepts it, a reason
   * ends the turn failed with `response_format_mismatch`, the answer kept in the transcript.
   */
  checkAnswer?: (text: string) => string | undefined;
  /** Compaction before model calls (domain/compaction.ts); off when unset. */
  contextPolicy?: ContextPolicy | undefined;
}

export interface TurnRequest {
  turnId: string;
  /** The committed conversation the turn continues. */
  history?: readonly Message[];
  input: readonly InputItem[];
  /** The turn inputs `input` came from: its user message names them (Message's `inputIds`). */
  inputIds?: readonly string[];
  signal?: AbortSignal;
  sink?: TurnEventSink;
  /** Per-turn overrides of the engine's limits. */
  maxIterations?: number;
  maxTurnTokens?: number;
  /**
   * Continue a turn from where it parked: its state is restored (the input is not appended
   * again) and its open batch runs before anything else; no model call is repeated.
   */
  resume?: TurnProgress;
  /** Sees the turn's state each time a batch of tool calls is about to run. */
  onToolBatch?: (progress: TurnProgress) => void;
}

/** A turn's state at the start of a tool batch: enough to continue it elsewhere. */
export interface TurnProgress {
  /** Messages the turn appended so far, ending with the assistant message of `batch`. */
  messages: Message[];
  toolCalls: ToolCallRecord[];
  usage: UsageTotals;
  iterations: number;
  assistantText: string;
  /** The batch about to run (the tool calls of the last assistant message). */
  batch: ToolCallPart[];
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
  /** Rejects only for invalid input (before any event) or a sink that fails on the terminal event. */
  runTurn(request: TurnRequest): Promise<TurnResult>;
}
