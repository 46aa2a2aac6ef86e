// How a turn ended: a closed union the runtime commits and the API converts. Exactly one per turn.
import type { BudgetReached } from "./budgets.js";
import type { JsonValue } from "./conversation.js";

export type TurnOutcome =
  /** `truncated`: the answer was cut at the model's output token limit. */
  | { kind: "finished"; reason: "assistant_message"; text: string; truncated?: boolean }
  | { kind: "finished"; reason: "tool_value"; toolName: string; callId: string; value: JsonValue }
  | {
      kind: "stopped";
      reason: "tool_error";
      toolName: string;
      callId: string;
      code: string;
      message: string;
    }
  | { kind: "stopped"; reason: "cancelled" }
  /** The turn stayed parked past TETHER_PARKED_TURN_TTL_MS without its answers. */
  | { kind: "stopped"; reason: "park_expired" }
  /**
   * `reached`: the budget that stopped it (ADR 0016); absent for the turn's token cap.
   * `budgetTokens` is that cap (maxTurnTokens), under the name stored turn events carry.
   */
  | {
      kind: "stopped";
      reason: "budget_exhausted";
      usedTokens: number;
      budgetTokens: number;
      reached?: BudgetReached;
    }
  | { kind: "stopped"; reason: "max_iterations"; iterations: number }
  /** A tool call was cut at the model's output token limit: the turn cannot run it. */
  | { kind: "stopped"; reason: "output_truncated"; toolName: string; callId: string }
  | {
      kind: "failed";
      reason: "provider_error";
      /** HTTP status when the provider answered one; absent for transport failures. */
      status?: number;
      retryable: boolean;
      attempts: number;
      message: string;
    }
  /** The final answer does not match the turn's response format (its text is kept). */
  | { kind: "failed"; reason: "response_format_mismatch"; message: string }
  /** A compaction's summary call failed under the retry policy; no compaction was committed. */
  | { kind: "failed"; reason: "compaction_failed"; attempts: number; message: string }
  | { kind: "failed"; reason: "internal"; message: string };

export type TurnOutcomeKind = TurnOutcome["kind"];
export type TurnOutcomeReason = TurnOutcome["reason"];
