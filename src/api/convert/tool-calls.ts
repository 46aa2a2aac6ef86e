// Tool-call records (typed waits) between tether.v1 messages and the domain, both directions.
// The LeaseService wire names a wait by one string, as it did before waits had kinds: a result by
// its call id, an approval by `approve:<call id>`, a decision as that wait's answer (is error =
// denied, output = the reason). The wire keeps that shape (the proto is unchanged, so workers
// built against it keep working); this module is the one place that maps it, in the same form
// the stores keep (src/store/shared/wait-codec.ts).
import { create } from "@bufbuild/protobuf";
import type {
  ApprovalDecision,
  ClientToolResult,
  ToolCallState,
  ToolWait,
} from "../../domain/tool-calls.js";
import {
  ToolCallAnswerSchema,
  ToolCallStateSchema,
  ToolCallStatus,
  type ToolCallAnswer as ToolCallAnswerPb,
  type ToolCallState as ToolCallStatePb,
} from "../../gen/tether/v1/lease_service_pb.js";
import { invalidArgument } from "../../domain/errors.js";

const APPROVAL = "approve:";
/** A result whose call id starts with `approve:`; ids hold no braces, so it is unambiguous. */
const RESULT_ESCAPE = "{r}";

export function waitToWire(wait: ToolWait): string {
  if (wait.kind === "approval") return `${APPROVAL}${wait.callId}`;
  return wait.callId.startsWith(APPROVAL) ? `${RESULT_ESCAPE}${wait.callId}` : wait.callId;
}

export function waitFromWire(id: string): ToolWait {
  if (id.startsWith(APPROVAL)) return { kind: "approval", callId: id.slice(APPROVAL.length) };
  if (id.startsWith(RESULT_ESCAPE))
    return { kind: "result", callId: id.slice(RESULT_ESCAPE.length) };
  return { kind: "result", callId: id };
}

export function toolCallStateToProto(state: ToolCallState): ToolCallStatePb {
  const callId = waitToWire(state);
  switch (state.status) {
    case "pending":
      return create(ToolCallStateSchema, { callId, status: ToolCallStatus.PENDING });
    case "answered":
      return create(ToolCallStateSchema, {
        callId,
        status: ToolCallStatus.ANSWERED,
        output: state.answer.output,
        isError: state.answer.isError,
      });
    case "decided":
      return create(ToolCallStateSchema, {
        callId,
        status: ToolCallStatus.ANSWERED,
        output: state.decision.reason,
        isError: !state.decision.approve,
      });
    case "closed":
      return create(ToolCallStateSchema, { callId, status: ToolCallStatus.CLOSED });
  }
}

export function toolCallStateFromProto(pb: ToolCallStatePb, field: string): ToolCallState {
  const wait = waitFromWire(pb.callId);
  switch (pb.status) {
    case ToolCallStatus.PENDING:
      return { ...wait, status: "pending" };
    case ToolCallStatus.ANSWERED:
      return wait.kind === "approval"
        ? { ...wait, status: "decided", decision: decisionFromWire(wait.callId, pb) }
        : {
            ...wait,
            status: "answered",
            answer: { callId: wait.callId, output: pb.output, isError: pb.isError },
          };
    case ToolCallStatus.CLOSED:
      return { ...wait, status: "closed" };
    default:
      throw invalidArgument(`${field}.status`, "must be pending, answered or closed");
  }
}

const decisionFromWire = (
  callId: string,
  pb: { output: string; isError: boolean },
): ApprovalDecision => ({ callId, approve: !pb.isError, reason: pb.output });

export function toolAnswerToProto(answer: ClientToolResult): ToolCallAnswerPb {
  return create(ToolCallAnswerSchema, { ...answer, callId: waitToWire(answerWait(answer)) });
}

export function decisionToProto(decision: ApprovalDecision): ToolCallAnswerPb {
  return create(ToolCallAnswerSchema, {
    callId: waitToWire({ kind: "approval", callId: decision.callId }),
    output: decision.reason,
    isError: !decision.approve,
  });
}

/** A wire answer: a client's result, or a decision when it names an approval. */
export type WireAnswer =
  { kind: "result"; answer: ClientToolResult } | { kind: "approval"; decision: ApprovalDecision };

export function toolAnswerFromProto(pb: ToolCallAnswerPb): WireAnswer {
  const wait = waitFromWire(pb.callId);
  return wait.kind === "approval"
    ? { kind: "approval", decision: decisionFromWire(wait.callId, pb) }
    : { kind: "result", answer: { callId: wait.callId, output: pb.output, isError: pb.isError } };
}

const answerWait = (answer: ClientToolResult): ToolWait => ({
  kind: "result",
  callId: answer.callId,
});
