// A turn's outcome as the SDK's turn status and error (ADR 0037, "Events out"). Codes stay inside
// the SDK's 23-value enum: the Python SDK's strict models refuse any other.
import type { TurnOutcomeSummary } from "../domain/turn-records.js";

export type TurnEnd =
  | { status: "completed" }
  | { status: "cancelled" }
  | { status: "failed"; error: { code: string; message: string } };

export function turnEndOf(outcome: TurnOutcomeSummary): TurnEnd {
  if (outcome.kind === "finished") return { status: "completed" };
  if (outcome.reason === "cancelled") return { status: "cancelled" };
  return { status: "failed", error: { code: codeOf(outcome), message: messageOf(outcome) } };
}

function codeOf(outcome: TurnOutcomeSummary): string {
  switch (outcome.reason) {
    case "output_truncated":
      return "max_output_tokens";
    case "budget_exhausted":
      return outcome.reached?.scope === "tenant"
        ? "organization_spend_limit_exceeded"
        : "usage_limit_exceeded";
    case "park_expired":
      return "request_timeout";
    case "provider_error":
      return outcome.status === 429 ? "rate_limit_exceeded" : "server_error";
    case "response_format_mismatch":
      return "invalid_request";
    case "compaction_failed":
      return "context_length_exceeded";
    default:
      return "internal_error";
  }
}

/** The detail a client needs, naming Tether's own reason. */
function messageOf(outcome: TurnOutcomeSummary): string {
  switch (outcome.reason) {
    case "tool_error":
      return `tool ${outcome.toolName} failed: ${outcome.code}: ${outcome.message}`;
    case "budget_exhausted":
      return `budget exhausted after ${outcome.usedTokens} tokens`;
    case "max_iterations":
      return `stopped after ${outcome.iterations} model calls (max_iterations)`;
    case "output_truncated":
      return `tool call ${outcome.toolName} was cut at the output token limit`;
    case "park_expired":
      return "the turn waited for tool results past its time (park_expired)";
    case "provider_error":
    case "response_format_mismatch":
    case "compaction_failed":
    case "internal":
      return `${outcome.reason}: ${outcome.message}`;
    default:
      return outcome.reason;
  }
}
