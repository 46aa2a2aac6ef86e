// Client tool call records between tether.v1 messages and the domain, both directions.
import { create } from "@bufbuild/protobuf";
import type { ClientToolResult, ToolCallState } from "../../domain/tool-calls.js";
import {
  ToolCallAnswerSchema,
  ToolCallStateSchema,
  ToolCallStatus,
  type ToolCallAnswer as ToolCallAnswerPb,
  type ToolCallState as ToolCallStatePb,
} from "../../gen/tether/v1/lease_service_pb.js";
import { invalidArgument } from "../../domain/errors.js";

export function toolCallStateToProto(state: ToolCallState): ToolCallStatePb {
  switch (state.status) {
    case "pending":
      return create(ToolCallStateSchema, {
        callId: state.callId,
        status: ToolCallStatus.PENDING,
      });
    case "answered":
      return create(ToolCallStateSchema, {
        callId: state.callId,
        status: ToolCallStatus.ANSWERED,
        output: state.answer.output,
        isError: state.answer.isError,
      });
    case "closed":
      return create(ToolCallStateSchema, { callId: state.callId, status: ToolCallStatus.CLOSED });
  }
}

export function toolCallStateFromProto(pb: ToolCallStatePb, field: string): ToolCallState {
  const callId = pb.callId;
  switch (pb.status) {
    case ToolCallStatus.PENDING:
      return { callId, status: "pending" };
    case ToolCallStatus.ANSWERED:
      return {
        callId,
        status: "answered",
        answer: { callId, output: pb.output, isError: pb.isError },
      };
    case ToolCallStatus.CLOSED:
      return { callId, status: "closed" };
    default:
      throw invalidArgument(`${field}.status`, "must be pending, answered or closed");
  }
}

export function toolAnswerToProto(answer: ClientToolResult): ToolCallAnswerPb {
  return create(ToolCallAnswerSchema, { ...answer });
}

export function toolAnswerFromProto(pb: ToolCallAnswerPb): ClientToolResult {
  return { callId: pb.callId, output: pb.output, isError: pb.isError };
}
