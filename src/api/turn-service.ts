// TurnService over the runtime: StreamTurn, WatchSession, SubmitToolResults and CancelTurn.
// Streams end when the client goes away (ctx.signal); the turn itself keeps running and commits.
import { rpcTraceOf } from "./rpc-trace.js";
import type { ServiceImpl } from "@connectrpc/connect";
import { invalidArgument } from "../domain/errors.js";
import { checkId, type SessionId } from "../domain/ids.js";
import type { CursoredEvent } from "../domain/session-events.js";
import type { TurnService } from "../gen/tether/v1/turn_service_pb.js";
import type { ClientToolResult } from "../ports/session-signals.js";
import { isValidCursor } from "../runtime/index.js";
import type { TetherRuntime } from "../runtime/index.js";
import {
  busyStrategyFromProto,
  clientToolsFromProto,
  inputFromProto,
  settingsFromProto,
} from "./convert/turn.js";
import { eventToProto } from "./convert/session-events.js";
import { fromUint64 } from "./convert/scalars.js";
import { mapEvents } from "./map-events.js";
import { transcriptMessage } from "./convert/transcript.js";
import { scopeOf, type TenantScope } from "./tenancy.js";

export interface TurnServiceOptions {
  runtime: TetherRuntime;
}

const MAX_TOOL_RESULTS = 128;
const MAX_TOOL_OUTPUT_BYTES = 1024 * 1024;

export function createTurnService(options: TurnServiceOptions): ServiceImpl<typeof TurnService> {
  const { runtime } = options;

  /** Events as the client sees them; with messages, turn_completed carries the turn's commit. */
  function convertFor(sessionId: SessionId, withMessages: boolean, scope: TenantScope) {
    return (item: CursoredEvent) => {
      const event = eventToProto(item, scope);
      if (!withMessages || item.event.type !== "turn_completed") return { event };
      const { headRevision } = item.event;
      return runtime.committedMessages(sessionId, item.turnId, headRevision).then((stored) => {
        if (event.event.case === "turnCompleted") {
          event.event.value.messages = stored.map(transcriptMessage);
        }
        return { event };
      });
    };
  }

  return {
    streamTurn(req, ctx) {
      const scope = scopeOf(ctx.values);
      const session = scope.session(req.sessionId, "session_id");
      const items = inputFromProto(req.input);
      if (req.clientRequestId !== "") checkId("client_request_id", req.clientRequestId);
      const events = runtime.streamTurn(
        {
          ...session,
          items,
          ...(req.clientRequestId !== "" ? { clientRequestId: req.clientRequestId } : {}),
          busyStrategy: busyStrategyFromProto(req.busyStrategy),
          clientTools: clientToolsFromProto(req.clientTools),
          settings: settingsFromProto(req.options),
          ...(req.agentId !== "" && {
            agent: {
              agentId: scope.toStore(req.agentId, "agent_id"),
              clientAgentId: req.agentId,
              version:
                req.agentVersion === 0n ? undefined : fromUint64(req.agentVersion, "agent_version"),
            },
          }),
          ...rpcTraceOf(ctx.values),
        },
        ctx.signal,
      );
      return mapEvents(events, convertFor(session.sessionId, req.includeCommittedMessages, scope));
    },

    watchSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const { sessionId, publicSessionId } = scope.session(req.sessionId, "session_id");
      const after = fromUint64(req.afterCursor, "after_cursor");
      if (!isValidCursor(after)) throw invalidArgument("after_cursor", "is not a cursor");
      const events = runtime.watch(
        sessionId,
        publicSessionId,
        after,
        req.untilTurnCompleted,
        ctx.signal,
      );
      return mapEvents(events, convertFor(sessionId, req.includeCommittedMessages, scope));
    },

    async submitToolResults(req, ctx) {
      const scope = scopeOf(ctx.values);
      const sessionId = scope.toStore(req.sessionId, "session_id");
      checkId("turn_id", req.turnId);
      const results: ClientToolResult[] = checkAnswers("results", req.results, (r) => r.output).map(
        (r) => ({ callId: r.callId, output: r.output, isError: r.isError }),
      );
      const report = await runtime.submitToolResults(sessionId, req.turnId, results);
      return { acceptedCallIds: report.accepted, ignoredCallIds: report.ignored };
    },

    async decideToolCalls(req, ctx) {
      const scope = scopeOf(ctx.values);
      const sessionId = scope.toStore(req.sessionId, "session_id");
      checkId("turn_id", req.turnId);
      const decisions = checkAnswers("decisions", req.decisions, (d) => d.reason).map((d) => ({
        callId: d.callId,
        approve: d.approve,
        reason: d.reason,
      }));
      const report = await runtime.decideToolCalls(sessionId, req.turnId, decisions);
      return { acceptedCallIds: report.accepted, ignoredCallIds: report.ignored };
    },

    async cancelTurn(req, ctx) {
      const scope = scopeOf(ctx.values);
      const sessionId = scope.toStore(req.sessionId, "session_id");
      if (req.turnId !== "") checkId("turn_id", req.turnId);
      const cancelled = await runtime.cancelTurn(
        sessionId,
        req.turnId === "" ? undefined : req.turnId,
      );
      return { cancelled };
    },
  };
}

/**
 * Results or decisions as a request carries them: not empty, not too many, each naming a call id,
 * its text (an output, a reason) within the size limit. Refusals name `<field>[i].<part>`.
 */
function checkAnswers<T extends { callId: string }>(
  field: "results" | "decisions",
  answers: readonly T[],
  textOf: (answer: T) => string,
): readonly T[] {
  if (answers.length === 0) throw invalidArgument(field, "must not be empty");
  if (answers.length > MAX_TOOL_RESULTS) {
    throw invalidArgument(field, `must hold at most ${MAX_TOOL_RESULTS} entries`);
  }
  const textField = field === "results" ? "output" : "reason";
  answers.forEach((answer, i) => {
    checkId(`${field}[${i}].call_id`, answer.callId);
    if (Buffer.byteLength(textOf(answer), "utf8") > MAX_TOOL_OUTPUT_BYTES) {
      throw invalidArgument(
        `${field}[${i}].${textField}`,
        `must be at most ${MAX_TOOL_OUTPUT_BYTES} bytes`,
      );
    }
  });
  return answers;
}
