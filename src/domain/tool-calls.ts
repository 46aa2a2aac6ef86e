// Client tool calls as the store keeps them: the lease holder records the calls its turn waits
// on, any replica stores the first answer for each, and the holder closes what it stops waiting
// for. The store decides who was first, so an answer is accepted once on every replica.
import { clientSessionId } from "./ids.js";

/** A client's answer to one tool call (SubmitToolResults). */
export interface ClientToolResult {
  callId: string;
  output: string;
  isError: boolean;
}

export type ToolCallState =
  | { callId: string; status: "pending" }
  | { callId: string; status: "answered"; answer: ClientToolResult }
  /** Closed unanswered (timed out, or its turn stopped waiting): later answers are ignored. */
  | { callId: string; status: "closed" };

/** What answerToolCalls did with each call id, in request order. */
export interface ToolAnswerReport {
  /** Stored now: the first answer for a pending call. */
  accepted: string[];
  /** Already answered, closed, or never requested by the turn. */
  ignored: string[];
}

/**
 * How long a turn's call records are kept after their last change. Long enough that a client
 * answering late learns its answer was ignored rather than that the turn never existed.
 */
export const TOOL_CALL_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Most call ids in one record, answer or close request. */
export const MAX_TOOL_CALLS_PER_REQUEST = 256;

/**
 * A tool call's idempotency key: `session/turn/call`, with the session as its client named it
 * (tenant prefixes never reach a client or a tool, ADR 0003). The turn id makes the key repeat on
 * every re-run of the turn.
 */
export function toolIdempotencyKey(sessionId: string, turnId: string, callId: string): string {
  return `${clientSessionId(sessionId)}/${turnId}/${callId}`;
}
