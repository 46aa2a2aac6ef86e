// What a turn waits for from outside, as the store keeps it: a client's result for a call, or a
// decision on a call that needs approval. The lease holder records the waits, any replica stores
// the first answer (or decision) for each, and the holder closes what it stops waiting for. The
// store decides who was first, so an answer is accepted once on every replica.
import { clientSessionId } from "./ids.js";

/** A client's answer to one tool call (SubmitToolResults). */
export interface ClientToolResult {
  callId: string;
  output: string;
  isError: boolean;
}

/** A call of a tool that needs approval, as the turn shows it before it runs. */
export interface ApprovalRequest {
  callId: string;
  toolName: string;
  argumentsJson: string;
}

/** A person's decision on an ApprovalRequest (DecideToolCalls); a denial gives the model `reason`. */
export interface ApprovalDecision {
  callId: string;
  approve: boolean;
  reason: string;
}

/**
 * What a turn waits for from outside about one call: its result (a client tool) or a decision
 * on it (a tool that needs approval). The two are distinct waits: a call that needs approval and
 * runs on the client has both, and settling one never settles the other.
 */
export type ToolWait = { kind: "result"; callId: string } | { kind: "approval"; callId: string };

export type ToolCallState =
  | (ToolWait & { status: "pending" })
  | { kind: "result"; callId: string; status: "answered"; answer: ClientToolResult }
  | { kind: "approval"; callId: string; status: "decided"; decision: ApprovalDecision }
  /** Closed unsettled (timed out, or its turn stopped waiting): later answers are ignored. */
  | (ToolWait & { status: "closed" });

/** A wait with what settled it: a client's result or a decision. */
export type SettledWait = Extract<ToolCallState, { status: "answered" | "decided" }>;

/**
 * What answerToolCalls (or decideApprovals) did with each call id, in request order. The ids are
 * call ids: which kind of wait they settle follows from the operation.
 */
export interface ToolAnswerReport {
  /** Stored now: the first answer (or decision) for a pending wait. */
  accepted: string[];
  /** Already settled, closed, or never requested by the turn. */
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
