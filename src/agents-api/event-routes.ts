// POST /v1/agents/sessions/{id}/events (ADR 0037, "Events in"): input events in order, each
// through the runtime as its gRPC counterpart goes (a message as StreamTurn's input, cancel as
// CancelTurn, a tool result as SubmitToolResults, an approval as DecideToolCalls), answered 202
// with no body. An event that fails stops the request there; the ones before it took effect.
import type { SessionId } from "../domain/ids.js";
import type { ToolCallState } from "../domain/tool-calls.js";
import type { ToolCallStore } from "../ports/runtime-store.js";
import type { TetherRuntime } from "../runtime/index.js";
import { bodyCheck } from "./body-check.js";
import {
  BUSY_STRATEGY_HEADER,
  busyStrategyOf,
  DECISION_REASONS,
  inputItemsOf,
  toolResultOf,
} from "./event-inputs.js";
import { idempotencyKeyOf } from "./idempotent-create.js";
import { EVENTS_CREATE, type EventsBody, type InputEvent } from "./event-schemas.js";
import type { Call, Reply, RouteTable } from "./route-table.js";

const checkEvents = bodyCheck<EventsBody>(EVENTS_CREATE);

export interface EventRoutesDeps {
  runtime: TetherRuntime;
  /** Reads a turn's waits, to tell an unknown call from one already answered. */
  store: Pick<ToolCallStore, "readToolCalls">;
  /** The tenant's quota gate for input, passed before a request's first effect. */
  admitInput?: AdmitInput | undefined;
}

/**
 * Throws quota_exhausted while one of the tenant's reject-mode quotas is used up: the 429 with
 * `retry-after-ms` the SDKs wait on, as gRPC's submissions are refused (ADR 0015).
 */
export type AdmitInput = (tenant: string) => Promise<void>;

const ACCEPTED: Reply = { status: 202, body: undefined };

type Of<K extends InputEvent["type"]> = Extract<InputEvent, { type: K }>;

export function addEventRoutes(routes: RouteTable, deps: EventRoutesDeps): void {
  routes.add("POST", "/v1/agents/sessions/:session_id/events", async (call) => {
    const { events } = checkEvents(call.body);
    const key = idempotencyKeyOf(call);
    // A message is input for a turn: refused as a whole while the tenant's quota is used up.
    if (events.some((event) => event.type === "agent.session.input.message")) {
      await deps.admitInput?.(call.scope.tenant);
    }
    let messages = 0;
    for (const [i, event] of events.entries()) {
      const refused = await one(deps, call, event, {
        field: `events[${i}]`,
        // A request's n-th message keeps its own key, so a retry matches each one.
        key: key === undefined ? undefined : messages === 0 ? key : `${key}#${messages}`,
      });
      if (event.type === "agent.session.input.message") messages++;
      if (refused) return refused;
    }
    return ACCEPTED;
  });
}

interface Where {
  field: string;
  key: string | undefined;
}

/** One event's effect; a Reply when the event is refused with an answer of its own. */
async function one(
  deps: EventRoutesDeps,
  call: Call,
  event: InputEvent,
  where: Where,
): Promise<Reply | undefined> {
  switch (event.type) {
    case "agent.session.input.message":
      await message(deps.runtime, call, event, where);
      return undefined;
    case "agent.session.input.cancel":
      await deps.runtime.cancelTurn(call.scope.toStore(sessionOf(call), "session_id"));
      return undefined;
    case "agent.session.input.tool_result":
      return toolResult(deps, call, event);
    case "agent.session.input.mcp_approval_request_result":
      return approval(deps, call, event);
  }
}

const sessionOf = (call: Call) => call.params.session_id ?? "";

/**
 * A message is StreamTurn's input without the stream: the session is created if it does not
 * exist; the busy strategy is the header's (steer by default); the Idempotency-Key is the
 * input's source key, stored with the input in its one step.
 */
async function message(
  runtime: TetherRuntime,
  call: Call,
  event: Of<"agent.session.input.message">,
  where: Where,
): Promise<void> {
  const items = inputItemsOf(event.input, where.field);
  const busyStrategy = busyStrategyOf(call.header(BUSY_STRATEGY_HEADER));
  const session = call.scope.session(sessionOf(call), "session_id");
  await runtime.submitTurn({
    ...session,
    items,
    ...(where.key !== undefined && { clientRequestId: where.key }),
    ...(call.trace !== undefined && { trace: call.trace }),
    busyStrategy,
    clientTools: [],
    settings: {},
  });
}

/**
 * A client tool's result. A call the turn never asked for gets exactly the 400 the SDK helpers
 * retry on (they may post before the call is registered); one already answered (or closed) is
 * accepted again without effect, so a retry after a lost answer gets its 202.
 */
async function toolResult(
  deps: EventRoutesDeps,
  call: Call,
  event: Of<"agent.session.input.tool_result">,
): Promise<Reply | undefined> {
  const sessionId = call.scope.toStore(sessionOf(call), "session_id");
  const wait = await waitOf(deps, sessionId, event.turn_id, "result", event.call_id);
  if (!wait) return unknownCall(event.call_id);
  if (wait.status !== "pending") return undefined;
  await deps.runtime.submitToolResults(sessionId, event.turn_id, [toolResultOf(event)]);
  return undefined;
}

/**
 * An approval decision: `request_id` is the call id, of the turn that takes answers now (the
 * parked one, else the running one); deny and cancel refuse the call with a fixed reason.
 */
async function approval(
  deps: EventRoutesDeps,
  call: Call,
  event: Of<"agent.session.input.mcp_approval_request_result">,
): Promise<Reply | undefined> {
  const sessionId = call.scope.toStore(sessionOf(call), "session_id");
  const turnId = await deps.runtime.currentTurn(sessionId);
  const wait =
    turnId === undefined
      ? undefined
      : await waitOf(deps, sessionId, turnId, "approval", event.request_id);
  if (!wait || turnId === undefined) return unknownApproval(event.request_id);
  if (wait.status !== "pending") return undefined;
  const { decision } = event.response;
  await deps.runtime.decideToolCalls(sessionId, turnId, [
    {
      callId: event.request_id,
      approve: decision === "approve",
      reason: DECISION_REASONS[decision],
    },
  ]);
  return undefined;
}

async function waitOf(
  deps: EventRoutesDeps,
  sessionId: SessionId,
  turnId: string,
  kind: "result" | "approval",
  callId: string,
): Promise<ToolCallState | undefined> {
  const states = await deps.store.readToolCalls(sessionId, turnId);
  return states.find((s) => s.kind === kind && s.callId === callId);
}

/** The SDK helpers match this message exactly: do not reword it. */
function unknownCall(callId: string): Reply {
  return invalidRequest(`Unknown pending tool call: ${callId}`);
}

function unknownApproval(requestId: string): Reply {
  return invalidRequest(`Unknown pending approval request: ${requestId}`);
}

function invalidRequest(message: string): Reply {
  return {
    status: 400,
    body: {
      error: { message, type: "invalid_request_error", param: null, code: "invalid_request_error" },
    },
  };
}
