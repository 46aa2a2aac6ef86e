// The engine's events as the session log records them: one place where the engine's vocabulary
// (what the model and the executor did) becomes the client's (what the stream shows). Events the
// client sees elsewhere map to nothing here: the outcome (and the final value in it) is announced
// as turn_completed once the commit has landed.
import type { SessionId } from "../../domain/ids.js";
import {
  toolIdempotencyKey,
  type ApprovalRequest,
  type ToolWait,
} from "../../domain/tool-calls.js";
import type { SessionEvent, ToolOrigin } from "../../domain/session-events.js";
import type { ProviderRetry, TurnEvent } from "../../domain/turn-events.js";
import type { Clock } from "../../ports/clock.js";

export interface TurnEventMapperContext {
  sessionId: SessionId;
  turnId: string;
  /** Tools the client runs: their calls are handed over as tool_call_requested. */
  clientToolNames: ReadonlySet<string>;
  clientToolTimeoutMs: number;
  clock: Clock;
  /** Sees every retry of a model call (the runtime logs it). */
  onRetry?: (event: ProviderRetry) => void;
  /** Runs before a client call or an approval is announced: its wait must be in the store. */
  beforeClientCall?: (wait: ToolWait) => Promise<void>;
  /** The MCP server a tool name belongs to, if any (for the events' origin). */
  serverOf?: (toolName: string) => string | undefined;
  /** Whether a call of this tool waits for approval before it runs. */
  needsApproval?: (toolName: string) => boolean;
  /**
   * Starts and results the stream already showed before the turn parked (`start:<id>`,
   * `done:<id>`): a resumed turn runs its open batch again and must not show them twice.
   */
  shown?: Iterable<string>;
}

export interface SessionEventSink {
  emit(event: SessionEvent): Promise<unknown>;
}

/** Maps each engine event to at most one session event, in order, and emits it to `sink`. */
export function createTurnEventMapper(sink: SessionEventSink, ctx: TurnEventMapperContext) {
  const argumentsByCall = new Map<string, string>();
  const idempotencyKey = (callId: string): string =>
    toolIdempotencyKey(ctx.sessionId, ctx.turnId, callId);

  /** A promise only for a client call, which must be recorded before it is announced. */
  const shown = new Set(ctx.shown ?? []);
  const startedAt = new Map<string, number>();
  const origin = (toolName: string): ToolOrigin => {
    if (ctx.clientToolNames.has(toolName)) return { kind: "client" };
    const server = ctx.serverOf?.(toolName);
    return server === undefined ? { kind: "server" } : { kind: "mcp", server };
  };

  /** The call's start as the client sees it: a server start, or a request to the client. */
  function announce(callId: string, toolName: string): SessionEvent | Promise<SessionEvent> {
    const call = {
      callId,
      toolName,
      argumentsJson: argumentsByCall.get(callId) ?? "",
      idempotencyKey: idempotencyKey(callId),
    };
    startedAt.set(callId, ctx.clock.nowMs());
    if (!ctx.clientToolNames.has(toolName)) {
      return { type: "tool_call_started", ...call, origin: origin(toolName) };
    }
    const recorded = ctx.beforeClientCall?.({ kind: "result", callId }) ?? Promise.resolve();
    return recorded.then((): SessionEvent => ({
      type: "tool_call_requested",
      ...call,
      deadlineMs: ctx.clock.nowMs() + ctx.clientToolTimeoutMs,
    }));
  }

  function map(event: TurnEvent): SessionEvent | Promise<SessionEvent> | undefined {
    switch (event.type) {
      case "text_delta":
        return event;
      case "tool_call_proposed":
        // Shown when the call starts, with its arguments: a call that never starts (unknown
        // tool, malformed arguments) is seen only through its error result.
        argumentsByCall.set(event.callId, event.argumentsJson);
        return undefined;
      case "tool_call_dispatched": {
        if (!once(`start:${event.callId}`)) return undefined;
        // A call that needs approval is announced as such; it starts once approved (runCall).
        if (ctx.needsApproval?.(event.toolName) !== true) {
          return announce(event.callId, event.toolName);
        }
        const request: ApprovalRequest = {
          callId: event.callId,
          toolName: event.toolName,
          argumentsJson: argumentsByCall.get(event.callId) ?? "",
        };
        const wait: ToolWait = { kind: "approval", callId: request.callId };
        const recorded = ctx.beforeClientCall?.(wait) ?? Promise.resolve();
        return recorded.then((): SessionEvent => ({ type: "tool_approval_requested", ...request }));
      }
      case "tool_result":
        if (!once(`done:${event.callId}`)) return undefined;
        return {
          type: "tool_call_finished",
          callId: event.callId,
          output: event.content,
          isError: event.status !== "ok",
          ...(event.status === "cancelled" && { cancelled: true as const }),
          ...durationOf(event.callId),
          origin: origin(event.toolName),
        };
      case "usage":
        return {
          type: "usage_reported",
          usage: event.usage,
          iteration: event.iteration,
          ...(event.purpose && { purpose: event.purpose }),
        };
      case "checkpoint_admission":
        return { type: "input_admitted", inputIds: event.sources.map((s) => s.id) };
      case "tool_final_value":
        return { type: "tool_value", valueJson: JSON.stringify(event.value) };
      case "provider_retry":
        ctx.onRetry?.(event);
        return event;
      case "reasoning_delta":
      case "output_truncated":
      case "budget_reached":
      case "context_compacted":
        return event;
      case "final_value":
      case "terminal":
        return undefined;
    }
  }

  function durationOf(callId: string): { durationMs?: number } {
    const at = startedAt.get(callId);
    return at === undefined ? {} : { durationMs: Math.max(0, ctx.clock.nowMs() - at) };
  }

  /** False when the key was shown already (by this run or before the turn parked). */
  function once(key: string): boolean {
    if (shown.has(key)) return false;
    shown.add(key);
    return true;
  }

  const put = async (mapped: SessionEvent | Promise<SessionEvent> | undefined) => {
    if (mapped === undefined) return;
    await sink.emit(mapped instanceof Promise ? await mapped : mapped);
  };

  return {
    emit: (event: TurnEvent): Promise<void> => put(map(event)),
    /** An approved call starts: shown once, however often the turn parks and resumes. */
    announceRun: (callId: string, toolName: string): Promise<void> =>
      once(`run:${callId}`) ? put(announce(callId, toolName)) : Promise.resolve(),
    /** What the stream showed so far, for the progress of a parking turn. */
    shownKeys: (): string[] => [...shown],
  };
}
