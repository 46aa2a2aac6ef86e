// Events a turn emits while it runs, in order. Plain data, so the API layer converts them to
// protobuf and the runtime appends them to the session's event log without knowing the engine.
import type { CompactionItem, CompactionMode, JsonValue } from "./conversation.js";
import type { BudgetReached } from "./budgets.js";
import type { TurnCheckpoint } from "./inputs.js";
import type { TurnOutcome } from "./turn-outcome.js";
import type { UsageTotals } from "./usage.js";

export type ToolResultStatus = "ok" | "error" | "cancelled" | "timed_out";

/**
 * Assistant text as the provider streams it. One shape from the provider to the wire: the
 * provider port, the engine's events and the session log all carry this object.
 */
export interface TextDelta {
  type: "text_delta";
  text: string;
}

/** The one place a text delta is built, so its shape is written once. */
export const textDelta = (text: string): TextDelta => ({ type: "text_delta", text });

/** Reasoning (chain of thought) as the provider streams it; stored as a reasoning part. */
export interface ReasoningDelta {
  type: "reasoning_delta";
  text: string;
}

export const reasoningDelta = (text: string): ReasoningDelta => ({ type: "reasoning_delta", text });

/** The model call `iteration` stopped at its output token limit. */
export interface OutputTruncated {
  type: "output_truncated";
  iteration: number;
}

/** A retryable provider failure; the call is repeated after `delayMs`; `reason` says why. */
export interface ProviderRetry {
  type: "provider_retry";
  iteration: number;
  attempt: number;
  delayMs: number;
  /** The provider's HTTP status, when the failure had one. */
  status?: number;
  reason: string;
}

/** A budget stopped the turn before a model call (ADR 0016); the terminal event follows. */
export interface BudgetReachedEvent extends BudgetReached {
  type: "budget_reached";
}

export type TurnEvent =
  | TextDelta
  | BudgetReachedEvent
  /**
   * The model proposed a tool call; emitted for every call of a response, in order, whoever runs
   * it. (The session log's `tool_call_requested` is narrower: a call handed to the client.)
   */
  | { type: "tool_call_proposed"; callId: string; toolName: string; argumentsJson: string }
  /**
   * The executor took a call (unknown tools and malformed arguments never do). The session log
   * shows it as `tool_call_started`, `tool_call_requested` or `tool_approval_requested`.
   */
  | { type: "tool_call_dispatched"; callId: string; toolName: string }
  | {
      type: "tool_result";
      callId: string;
      toolName: string;
      status: ToolResultStatus;
      /** The content the model reads next. */
      content: string;
    }
  /** After every model call: that call's usage and the turn's running total. */
  /**
   * After every model call: that call's usage and the turn's running total. A compaction's
   * summary calls say `purpose: "compaction"` (their iteration counts the summary calls).
   */
  | {
      type: "usage";
      iteration: number;
      usage: UsageTotals;
      total: UsageTotals;
      purpose?: "compaction";
    }
  | ContextCompacted
  | ProviderRetry
  | ReasoningDelta
  | OutputTruncated
  /**
   * Input that entered the running turn at a checkpoint, as user messages (the session log shows
   * the ids as `input_admitted`).
   */
  | { type: "checkpoint_admission"; checkpoint: TurnCheckpoint; sources: AdmissionSource[] }
  /** The turn's value when it finishes with an assistant message. */
  | { type: "final_value"; text: string }
  /** The turn's value when a tool's `finish` control ends it (the log shows it as `tool_value`). */
  | { type: "tool_final_value"; toolName: string; callId: string; value: JsonValue }
  /** Always last, exactly once. */
  | { type: "terminal"; outcome: TurnOutcome };

/** The context was compacted before a model call (domain/compaction.ts). */
export interface ContextCompacted {
  type: "context_compacted";
  tokensBefore: number;
  tokensAfter: number;
  coversThroughMessage: number;
  mode: CompactionMode;
  clearedToolResults: number;
}

/** What watchers hear of a compaction item (in a turn, or CompactSession's). */
export const contextCompacted = (item: CompactionItem): ContextCompacted => ({
  type: "context_compacted",
  tokensBefore: item.tokensBefore,
  tokensAfter: item.tokensAfter,
  coversThroughMessage: item.coversThroughMessage,
  mode: item.mode,
  clearedToolResults: item.clearedToolResults.length,
});

export interface AdmissionSource {
  kind: "steer" | "queued_work";
  id: string;
}

export type TurnEventType = TurnEvent["type"];
