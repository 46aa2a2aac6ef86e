// Session events (what the log records and a watch streams) as tether.v1.TurnEvent messages: the
// one place the domain's event vocabulary meets the wire's oneof.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { CursoredEvent, SessionEvent, ToolOrigin } from "../../domain/session-events.js";
import {
  ResumeReason,
  ToolOrigin_Kind,
  TurnEventSchema,
  type TurnEvent as TurnEventPb,
} from "../../gen/tether/v1/turn_pb.js";
import { budgetReachedToProto } from "./budgets.js";
import { UsagePurpose } from "../../gen/tether/v1/context_pb.js";
import { compactionModeToProto } from "./context.js";
import { toUint64, type SessionIdMap } from "./scalars.js";
import { snapshotToProto, usageToProto } from "./session.js";
import { outcomeToProto } from "./turn.js";

const ORIGIN_KINDS = {
  client: ToolOrigin_Kind.CLIENT,
  server: ToolOrigin_Kind.SERVER,
  mcp: ToolOrigin_Kind.MCP,
} as const;

const originToProto = (origin: ToolOrigin) => ({
  kind: ORIGIN_KINDS[origin.kind],
  server: origin.kind === "mcp" ? origin.server : "",
});

const RESUME_REASONS = {
  answered: ResumeReason.ANSWERED,
  cancelled: ResumeReason.CANCELLED,
  expired: ResumeReason.EXPIRED,
} as const;
type EventBody = MessageInitShape<typeof TurnEventSchema>["event"];
type EventOf<K extends SessionEvent["type"]> = Extract<SessionEvent, { type: K }>;
type ToolEvent = EventOf<
  | "tool_approval_requested"
  | "tool_call_started"
  | "tool_call_requested"
  | "tool_call_finished"
  | "tool_value"
>;
type LifecycleEvent = EventOf<
  "input_queued" | "turn_started" | "turn_parked" | "turn_resumed" | "turn_completed" | "gap"
>;
type ModelEvent = Exclude<SessionEvent, ToolEvent | LifecycleEvent>;

/** One switch per family of events, so each stays short and the compiler checks each is whole. */
function eventBody(event: SessionEvent, ids: SessionIdMap): EventBody {
  switch (event.type) {
    case "tool_approval_requested":
    case "tool_call_started":
    case "tool_call_requested":
    case "tool_call_finished":
    case "tool_value":
      return toolEventBody(event);
    case "input_queued":
    case "turn_started":
    case "turn_parked":
    case "turn_resumed":
    case "turn_completed":
    case "gap":
      return lifecycleEventBody(event, ids);
    default:
      return modelEventBody(event);
  }
}

/** A turn's course and the session's log: queued, started, parked, resumed, completed, gaps. */
function lifecycleEventBody(event: LifecycleEvent, ids: SessionIdMap): EventBody {
  switch (event.type) {
    case "input_queued":
      return { case: "inputQueued", value: { inputId: event.inputId } };
    case "turn_started":
      return {
        case: "turnStarted",
        value: {
          inputIds: event.inputIds,
          turnIndex: toUint64(event.turnIndex, "turn_index"),
          unavailableServers: event.unavailableServers ?? [],
        },
      };
    case "turn_parked":
      return {
        case: "turnParked",
        value: {
          pendingCallIds: event.pendingCallIds,
          approvalCallIds: event.approvalCallIds,
          expiresAtMs: BigInt(event.expiresAtMs),
        },
      };
    case "turn_resumed":
      return { case: "turnResumed", value: { reason: RESUME_REASONS[event.reason] } };
    case "turn_completed":
      return {
        case: "turnCompleted",
        value: {
          outcome: outcomeToProto(event.outcome),
          headRevision: toUint64(event.headRevision, "head_revision"),
          usage: usageToProto(event.usage, "usage", event.costMicros),
        },
      };
    case "gap":
      return {
        case: "gap",
        value: {
          requestedAfterCursor: BigInt(event.requestedAfterCursor),
          retainedFromCursor: BigInt(event.retainedFromCursor),
          ...(event.snapshot ? { snapshot: snapshotToProto(event.snapshot, ids) } : {}),
        },
      };
  }
}

/** Tool calls as the client sees them: approvals, starts, requests, results, a tool's value. */
function toolEventBody(event: ToolEvent): EventBody {
  switch (event.type) {
    case "tool_approval_requested":
      return {
        case: "toolApprovalRequested",
        value: { callId: event.callId, name: event.toolName, argumentsJson: event.argumentsJson },
      };
    case "tool_call_started":
      return {
        case: "toolCallStarted",
        value: {
          callId: event.callId,
          name: event.toolName,
          argumentsJson: event.argumentsJson,
          idempotencyKey: event.idempotencyKey,
          ...(event.origin && { origin: originToProto(event.origin) }),
        },
      };
    case "tool_call_requested":
      return {
        case: "toolCallRequested",
        value: {
          callId: event.callId,
          name: event.toolName,
          argumentsJson: event.argumentsJson,
          deadlineMs: BigInt(event.deadlineMs),
          idempotencyKey: event.idempotencyKey,
        },
      };
    case "tool_call_finished":
      return {
        case: "toolCallFinished",
        value: {
          callId: event.callId,
          output: event.output,
          isError: event.isError,
          durationMs: BigInt(event.durationMs ?? 0),
          ...(event.origin && { origin: originToProto(event.origin) }),
        },
      };
    case "tool_value":
      return { case: "toolValue", value: { valueJson: event.valueJson } };
  }
}

/** What the model calls produce: text, reasoning, usage, retries, truncation, admitted input. */
function modelEventBody(event: ModelEvent): EventBody {
  switch (event.type) {
    case "text_delta":
      return { case: "textDelta", value: { text: event.text } };
    case "reasoning_delta":
      return { case: "reasoningDelta", value: { text: event.text } };
    case "usage_reported":
      return {
        case: "usageReported",
        value: {
          usage: usageToProto(event.usage),
          iteration: event.iteration,
          purpose:
            event.purpose === "compaction" ? UsagePurpose.COMPACTION : UsagePurpose.UNSPECIFIED,
        },
      };
    case "context_compacted":
      return {
        case: "contextCompacted",
        value: {
          tokensBefore: toUint64(event.tokensBefore, "tokens_before"),
          tokensAfter: toUint64(event.tokensAfter, "tokens_after"),
          coversThroughMessage: toUint64(event.coversThroughMessage, "covers_through_message"),
          mode: compactionModeToProto(event.mode),
          clearedToolResults: event.clearedToolResults,
        },
      };
    case "provider_retry":
      return {
        case: "providerRetry",
        value: {
          iteration: event.iteration,
          attempt: event.attempt,
          delayMs: toUint64(event.delayMs, "delay_ms"),
          reason: event.reason,
          status: event.status ?? 0,
        },
      };
    case "output_truncated":
      return { case: "outputTruncated", value: { iteration: event.iteration } };
    case "budget_reached":
      return { case: "budgetReached", value: budgetReachedToProto(event) };
    case "input_admitted":
      return { case: "inputAdmitted", value: { inputIds: event.inputIds } };
  }
}

export function eventToProto(item: CursoredEvent, ids: SessionIdMap): TurnEventPb {
  return create(TurnEventSchema, {
    cursor: BigInt(item.cursor),
    sessionId: item.sessionId,
    turnId: item.turnId,
    event: eventBody(item.event, ids),
  });
}
