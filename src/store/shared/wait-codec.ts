// How the stores name a typed wait (domain/tool-calls.ts) in a turn's tool-call records and
// store a decision as a record's answer. The records were keyed by plain strings before waits
// had kinds: a result by its call id, an approval by `approve:<call id>`, a decision stored as an
// answer (is error = denied, output = the reason). The stores keep exactly that layout, so records
// written before the upgrade read back the same, and the Lua scripts (one per operation) did not
// change: the kind lives only in this module, never past the store adapters.
import type { ApprovalDecision, ToolCallState, ToolWait } from "../../domain/tool-calls.js";

const APPROVAL = "approve:";
/**
 * A result whose call id itself starts with `approve:` is escaped so that it never names the
 * approval of another call; ids never hold braces (domain/ids.ts), so the escape is unambiguous
 * and no record stored before carries it.
 */
const RESULT_ESCAPE = "{r}";

/** The record field of a wait. */
export function waitField(wait: ToolWait): string {
  if (wait.kind === "approval") return `${APPROVAL}${wait.callId}`;
  return wait.callId.startsWith(APPROVAL) ? `${RESULT_ESCAPE}${wait.callId}` : wait.callId;
}

/** The wait a record field names. */
export function waitOf(field: string): ToolWait {
  if (field.startsWith(APPROVAL)) return { kind: "approval", callId: field.slice(APPROVAL.length) };
  if (field.startsWith(RESULT_ESCAPE)) {
    return { kind: "result", callId: field.slice(RESULT_ESCAPE.length) };
  }
  return { kind: "result", callId: field };
}

/** A record's answer: a client's result as given, a decision as (reason, denied). */
export interface StoredAnswer {
  output: string;
  isError: boolean;
}

export const decisionRecord = (decision: ApprovalDecision): StoredAnswer => ({
  output: decision.reason,
  isError: !decision.approve,
});

export const decisionOf = (callId: string, answer: StoredAnswer): ApprovalDecision => ({
  callId,
  approve: !answer.isError,
  reason: answer.output,
});

/** A record read back: its field, and its answer when it has one (else pending or closed). */
export function stateOf(
  field: string,
  status: "pending" | "answered" | "closed",
  answer?: StoredAnswer,
): ToolCallState {
  const wait = waitOf(field);
  if (status !== "answered") return { ...wait, status };
  const stored = answer ?? { output: "", isError: false };
  if (wait.kind === "approval") {
    return { ...wait, status: "decided", decision: decisionOf(wait.callId, stored) };
  }
  return { ...wait, status: "answered", answer: { callId: wait.callId, ...stored } };
}
