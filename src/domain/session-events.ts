// Events of a session's log, as clients see them: the runtime's view of a turn (engine events
// mapped, plus turn start and completion with the commit's head revision).
import type { TurnOutcome } from "./turn-outcome.js";
import type {
  BudgetReachedEvent,
  ContextCompacted,
  OutputTruncated,
  ProviderRetry,
  ReasoningDelta,
  TextDelta,
} from "./turn-events.js";
import type { UsageTotals } from "./usage.js";
import type { SessionSnapshot } from "./session.js";

/** Where a tool runs: in the client, in Tether, or on an MCP server. */
export type ToolOrigin = { kind: "client" } | { kind: "server" } | { kind: "mcp"; server: string };

export type SessionEvent =
  | { type: "input_queued"; inputId: string }
  | {
      type: "turn_started";
      inputIds: string[];
      turnIndex: number;
      /** Tool servers the turn selected that were unavailable: it runs without their tools. */
      unavailableServers?: string[];
    }
  /** The turn waits only for outside answers: it released its replica (domain/parked-turns.ts). */
  | {
      type: "turn_parked";
      /** Client calls whose results it waits for. */
      pendingCallIds: string[];
      /** Calls whose approval it waits for. */
      approvalCallIds: string[];
      expiresAtMs: number;
    }
  /** A parked turn goes on (on whichever replica resumed it); not a second turn_started. */
  | { type: "turn_resumed"; reason: "answered" | "cancelled" | "expired" }
  /** The call runs only once approved: DecideToolCalls answers it. */
  | { type: "tool_approval_requested"; callId: string; toolName: string; argumentsJson: string }
  | TextDelta
  | {
      type: "tool_call_started";
      callId: string;
      toolName: string;
      argumentsJson: string;
      idempotencyKey: string;
      origin?: ToolOrigin;
    }
  | {
      type: "tool_call_requested";
      callId: string;
      toolName: string;
      argumentsJson: string;
      deadlineMs: number;
      idempotencyKey: string;
    }
  | {
      type: "tool_call_finished";
      callId: string;
      output: string;
      isError: boolean;
      /** The turn was cancelled before the call finished (its output says so); absent otherwise. */
      cancelled?: true;
      /** From the call's start to its result; absent for a call that never started. */
      durationMs?: number;
      origin?: ToolOrigin;
    }
  /** `purpose: "compaction"` for a compaction's summary call (its own iteration count). */
  | { type: "usage_reported"; usage: UsageTotals; iteration: number; purpose?: "compaction" }
  | ContextCompacted
  | { type: "input_admitted"; inputIds: string[] }
  | ProviderRetry
  | ReasoningDelta
  | OutputTruncated
  | BudgetReachedEvent
  | { type: "tool_value"; valueJson: string }
  | {
      type: "turn_completed";
      outcome: TurnOutcome;
      headRevision: number;
      usage: UsageTotals;
      /** What the turn cost at the configured prices (ADR 0016); absent when unpriced. */
      costMicros?: number;
      /** The lease generation that announced the commit (evidence for audits; not on the wire). */
      fencingToken?: number;
      /**
       * Announced by a later lease holder: the committing replica stopped between its commit and
       * this event, so the outcome is read back from the committed transcript.
       */
      recovered?: boolean;
    }
  | {
      type: "gap";
      requestedAfterCursor: number;
      retainedFromCursor: number;
      snapshot: SessionSnapshot | undefined;
    };

/** An event with its place in the session's log. */
export interface CursoredEvent {
  cursor: number;
  sessionId: string;
  turnId: string;
  event: SessionEvent;
}
