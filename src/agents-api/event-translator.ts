// The one pure translator of ADR 0037's "Events out": a session's log, entry by entry, becomes the
// Agents API's stream events. The output depends on nothing but the entries (no clock, no random
// ids, no replica), so every replica and every resume that folds the same entries emits the same
// events with the same ids. Item ids come from the log: `msg_<turn>_<n>` for the turn's n-th
// assistant message, `msg_<input>` for a user input, `fc_`/`fco_`/`mcp_` + the call id.
import type { CursoredEvent, SessionEvent } from "../domain/session-events.js";
import { agentSession, approvalAction, functionCallAction } from "./agent-session-shape.js";
import { eventId } from "./event-ids.js";
import { itemIds } from "./item-ids.js";
import {
  assistantMessage,
  functionCall,
  functionCallOutput,
  mcpCall,
  outputText,
  turnShape,
  userMessage,
  type RequiredAction,
  type SessionStatus,
  type TurnView,
} from "./event-objects.js";
import { turnEndOf } from "./turn-outcome-codes.js";

export type DoorEvent = { event_id: string; type: string } & Record<string, unknown>;

interface OpenMessage {
  id: string;
  outputIndex: number;
  text: string;
}

interface ToolCallSeen {
  name: string;
  argumentsJson: string;
  outputIndex: number;
  /** Set for a call Tether or an MCP server runs (shown as an `mcp_call` item). */
  serverLabel?: string;
}

interface TurnState {
  id: string;
  /** Assistant messages opened so far (the next one's number). */
  messages: number;
  /** Output items opened so far (the next one's output_index). */
  outputs: number;
  open: OpenMessage | undefined;
  calls: Readonly<Record<string, ToolCallSeen>>;
}

export interface TranslatorState {
  readonly sessionId: string;
  readonly status: SessionStatus;
  readonly required: readonly RequiredAction[];
  readonly turn: TurnState | undefined;
}

export function initialTranslatorState(sessionId: string): TranslatorState {
  return { sessionId, status: "idle", required: [], turn: undefined };
}

type Payload = { type: string } & Record<string, unknown>;

/** One log entry: the state after it and the events it yields, ids assigned in order. */
export function translateEntry(
  state: TranslatorState,
  entry: CursoredEvent,
): { state: TranslatorState; events: DoorEvent[] } {
  const draft = createDraft(state, entry.turnId);
  translateEvent(draft, entry.event);
  const events = draft.out.map((payload, i) => ({
    event_id: eventId(entry.cursor, i),
    ...payload,
  }));
  return { state: draft.finish(), events };
}

/** Every event a run of entries yields, from a given state (a whole log from the initial one). */
export function translateLog(state: TranslatorState, entries: readonly CursoredEvent[]) {
  let current = state;
  const events: DoorEvent[] = [];
  for (const entry of entries) {
    const step = translateEntry(current, entry);
    current = step.state;
    events.push(...step.events);
  }
  return { state: current, events };
}

type Draft = ReturnType<typeof createDraft>;

/** A working copy of the state for one entry, with the helpers that emit events. */
function createDraft(state: TranslatorState, turnId: string) {
  let status = state.status;
  let required = state.required;
  let turn: TurnState =
    state.turn && (state.turn.id === turnId || turnId === "")
      ? { ...state.turn }
      : { id: turnId, messages: 0, outputs: 0, open: undefined, calls: {} };
  const out: Payload[] = [];
  const sessionId = state.sessionId;
  const scope = () => ({ session_id: sessionId, turn_id: turn.id });
  const draft = {
    out,
    sessionId,
    get turn() {
      return turn;
    },
    setTurn(next: Partial<TurnState>) {
      turn = { ...turn, ...next };
    },
    get required() {
      return required;
    },
    setRequired(next: readonly RequiredAction[]) {
      required = next;
    },
    scope,
    session(next: SessionStatus, nextRequired: readonly RequiredAction[] = required) {
      status = next;
      required = nextRequired;
      const session = agentSession({ id: sessionId, status, requiredActions: required });
      out.push({ type: `agent.session.${next}`, session });
    },
    get status() {
      return status;
    },
    turnEvent(kind: string, view: Omit<TurnView, "id" | "sessionId">, extra = {}) {
      const shown = turnShape({ ...view, id: turn.id, sessionId });
      out.push({ type: `agent.session.turn.${kind}`, ...scope(), turn: shown, ...extra });
    },
    item(kind: "added" | "done", item: Record<string, unknown>, outputIndex: number | null) {
      out.push({
        type: `agent.session.turn.item.${kind}`,
        ...scope(),
        item,
        output_index: outputIndex,
      });
    },
    finish: (): TranslatorState => ({ sessionId, status, required, turn }),
  };
  return draft;
}

function translateEvent(d: Draft, event: SessionEvent): void {
  switch (event.type) {
    case "turn_started":
      d.setTurn({ id: d.turn.id, messages: 0, outputs: 0, open: undefined, calls: {} });
      d.turnEvent("created", { status: "in_progress" });
      d.session("in_progress", []);
      d.turnEvent("in_progress", { status: "in_progress" });
      for (const id of event.inputIds) userAdded(d, id);
      return;
    case "input_admitted":
      for (const id of event.inputIds) userAdded(d, id);
      return;
    case "text_delta":
      addText(d, event.text);
      return;
    case "tool_value":
      addText(d, event.valueJson);
      return;
    case "tool_call_requested":
      requestCall(d, event.callId, event.toolName, event.argumentsJson);
      return;
    case "tool_approval_requested":
      requestApproval(d, event.callId, event.toolName, event.argumentsJson);
      return;
    case "tool_call_started":
      startServerCall(d, event);
      return;
    case "tool_call_finished":
      if (event.cancelled) cancelCall(d, event.callId);
      else finishCall(d, event.callId, event.output, event.isError);
      return;
    case "turn_resumed":
      // The answers that resumed the turn are logged after this entry: the last of them sends
      // `in_progress` after its call's output (the SDK's order). Only a resume that settled
      // nothing the stream listed sends it here.
      if (d.status === "requires_action" && d.required.length === 0) d.session("in_progress", []);
      return;
    case "turn_completed":
      completeTurn(d, event);
      return;
    case "gap":
      reportGap(d, event);
      return;
    default:
      // input_queued, turn_parked, usage, retries, truncation, compaction, reasoning, budget
      // notices: nothing the SDK's events show (reasoning is raw, not a summary).
      return;
  }
}

function userAdded(d: Draft, inputId: string): void {
  d.item("added", userMessage(itemIds.userMessage(inputId), d.turn.id), null);
}

function addText(d: Draft, text: string): void {
  let open = d.turn.open;
  if (!open) {
    const id = itemIds.assistantMessage(d.turn.id, d.turn.messages);
    open = { id, outputIndex: d.turn.outputs, text: "" };
    d.setTurn({ messages: d.turn.messages + 1, outputs: d.turn.outputs + 1 });
    d.item(
      "added",
      assistantMessage(open.id, d.turn.id, undefined, "in_progress", null),
      open.outputIndex,
    );
    d.out.push({
      type: "agent.session.turn.content_part.added",
      ...partScope(d, open),
      part: outputText(""),
    });
  }
  d.setTurn({ open: { ...open, text: open.text + text } });
  d.out.push({ type: "agent.session.turn.output_text.delta", ...partScope(d, open), delta: text });
}

function partScope(d: Draft, open: OpenMessage) {
  return { ...d.scope(), item_id: open.id, output_index: open.outputIndex, content_index: 0 };
}

/** Closes the open assistant message: `commentary` before a tool call, else the final answer. */
function closeMessage(
  d: Draft,
  phase: "commentary" | "final_answer",
  status: "completed" | "incomplete",
) {
  const open = d.turn.open;
  if (!open) return;
  d.out.push({
    type: "agent.session.turn.output_text.done",
    ...partScope(d, open),
    text: open.text,
  });
  d.out.push({
    type: "agent.session.turn.content_part.done",
    ...partScope(d, open),
    part: outputText(open.text),
  });
  d.item("done", assistantMessage(open.id, d.turn.id, open.text, status, phase), open.outputIndex);
  d.setTurn({ open: undefined });
}

function openCall(d: Draft, callId: string, seen: Omit<ToolCallSeen, "outputIndex">): number {
  const outputIndex = d.turn.outputs;
  d.setTurn({
    outputs: outputIndex + 1,
    calls: { ...d.turn.calls, [callId]: { ...seen, outputIndex } },
  });
  return outputIndex;
}

function requestCall(d: Draft, callId: string, name: string, argumentsJson: string): void {
  answerApproval(d, callId);
  closeMessage(d, "commentary", "completed");
  const outputIndex = openCall(d, callId, { name, argumentsJson });
  d.item(
    "added",
    functionCall({ callId, name, argumentsJson }, d.turn.id, "in_progress"),
    outputIndex,
  );
  const action = functionCallAction(callId, name, argumentsJson, d.turn.id);
  d.session("requires_action", [...d.required, action]);
}

function requestApproval(d: Draft, callId: string, name: string, argumentsJson: string): void {
  closeMessage(d, "commentary", "completed");
  const action = approvalAction(callId, name, argumentsJson, d.turn.id);
  d.session("requires_action", [...d.required, action]);
}

function startServerCall(d: Draft, event: Extract<SessionEvent, { type: "tool_call_started" }>) {
  answerApproval(d, event.callId);
  closeMessage(d, "commentary", "completed");
  const serverLabel = event.origin?.kind === "mcp" ? event.origin.server : "tether";
  const call = {
    callId: event.callId,
    name: event.toolName,
    argumentsJson: event.argumentsJson,
    serverLabel,
  };
  const outputIndex = openCall(d, event.callId, call);
  d.item("added", mcpCall(call, d.turn.id, undefined, "in_progress"), outputIndex);
}

function finishCall(d: Draft, callId: string, output: string, isError: boolean): void {
  answerApproval(d, callId); // a denied call finishes without starting
  const seen = d.turn.calls[callId];
  if (!seen) return; // a call this stream never saw start (before a gap): nothing to close
  const rest = { ...d.turn.calls };
  delete rest[callId];
  d.setTurn({ calls: rest });
  const status = isError ? "failed" : "completed";
  if (seen.serverLabel !== undefined) {
    const call = {
      callId,
      name: seen.name,
      argumentsJson: seen.argumentsJson,
      serverLabel: seen.serverLabel,
    };
    d.item("done", mcpCall(call, d.turn.id, { output, isError }, status), seen.outputIndex);
    return;
  }
  d.item("added", functionCallOutput(callId, d.turn.id, output, isError), null);
  const call = { callId, name: seen.name, argumentsJson: seen.argumentsJson };
  d.item("done", functionCall(call, d.turn.id, status), seen.outputIndex);
  const required = d.required.filter((a) => a.type !== "function_call" || a.call_id !== callId);
  // The session event is sent when the status changes: the last answered call resumes the turn.
  if (d.status === "requires_action" && required.length === 0) d.session("in_progress", []);
  else d.setRequired(required);
}

/**
 * A call the cancel cut short: left open, so the turn's end closes it as `incomplete` with the
 * other open items (no output item, no resumed session: the turn only ends).
 */
function cancelCall(d: Draft, callId: string): void {
  d.setRequired(d.required.filter((a) => a.type !== "function_call" || a.call_id !== callId));
}

/** A decided approval leaves the required actions; the last one resumes the session. */
function answerApproval(d: Draft, callId: string): void {
  const required = d.required.filter(
    (a) => a.type !== "mcp_approval_request" || a.request_id !== callId,
  );
  if (required.length === d.required.length) return;
  if (d.status === "requires_action" && required.length === 0) d.session("in_progress", []);
  else d.setRequired(required);
}

function completeTurn(d: Draft, event: Extract<SessionEvent, { type: "turn_completed" }>) {
  const end = turnEndOf(event.outcome);
  const cut = end.status !== "completed";
  closeMessage(d, "final_answer", cut ? "incomplete" : "completed");
  for (const [callId, seen] of Object.entries(d.turn.calls)) {
    const call = { callId, name: seen.name, argumentsJson: seen.argumentsJson };
    const item =
      seen.serverLabel === undefined
        ? functionCall(call, d.turn.id, "incomplete")
        : mcpCall({ ...call, serverLabel: seen.serverLabel }, d.turn.id, undefined, "incomplete");
    d.item("done", item, seen.outputIndex);
  }
  d.setTurn({ calls: {} });
  if (end.status === "failed") {
    d.out.push({
      type: "error",
      session_id: d.sessionId,
      error: {
        code: end.error.code,
        message: end.error.message,
        param: null,
        type: "server_error",
      },
    });
  }
  const usage = {
    usage: turnShape({ id: "", sessionId: "", status: end.status, usage: event.usage }).usage,
  };
  d.turnEvent(
    end.status,
    { status: end.status, usage: event.usage, ...("error" in end && { error: end.error }) },
    usage,
  );
  d.session("idle", []);
}

function reportGap(d: Draft, event: Extract<SessionEvent, { type: "gap" }>): void {
  d.out.push({
    type: "error",
    session_id: d.sessionId,
    error: {
      code: "cursor_expired",
      message: `events after cursor ${event.requestedAfterCursor} are no longer kept; the log resumes at ${event.retainedFromCursor}`,
      param: "after",
      type: "invalid_request_error",
    },
  });
  // What came before is unknown now: a turn in flight is followed from what the log still holds.
  d.setTurn({ open: undefined, calls: {} });
}
