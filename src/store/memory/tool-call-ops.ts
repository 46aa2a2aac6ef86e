// Client tool call records of the memory store. They live beside the session cells, not in them,
// so like Redis's expiring keys they outlive a deleted session until their retention ends.
import { turnNotRunning } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import {
  TOOL_CALL_RETENTION_MS,
  type ClientToolResult,
  type ToolAnswerReport,
  type ToolCallState,
} from "../../domain/tool-calls.js";
import { atomically, type MemoryContext, type TurnToolCalls } from "./context.js";
import { copy, requireLiveFence } from "./session-cell.js";

const recordKey = (sessionId: SessionId, turnId: string): string => `${sessionId}\u0000${turnId}`;

/** The turn's records while they are retained; expired ones are dropped on sight. */
export function liveRecords(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
  nowMs: number,
): TurnToolCalls | undefined {
  const key = recordKey(sessionId, turnId);
  const records = ctx.toolCalls.get(key);
  if (records && records.expiresAtMs <= nowMs) {
    ctx.toolCalls.delete(key);
    return undefined;
  }
  return records;
}

export function touched(ctx: MemoryContext, sessionId: SessionId, turnId: string, nowMs: number) {
  const records = liveRecords(ctx, sessionId, turnId, nowMs) ?? {
    calls: new Map<string, ToolCallState>(),
    expiresAtMs: 0,
  };
  records.expiresAtMs = nowMs + TOOL_CALL_RETENTION_MS;
  ctx.toolCalls.set(recordKey(sessionId, turnId), records);
  return records;
}

export function recordToolCalls(
  ctx: MemoryContext,
  fence: LeaseFence,
  turnId: string,
  callIds: string[],
): Promise<ToolCallState[]> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    const records = touched(ctx, fence.sessionId, turnId, nowMs);
    return callIds.map((callId) => {
      const state = records.calls.get(callId) ?? { callId, status: "pending" };
      records.calls.set(callId, state);
      return copy(state);
    });
  });
}

export function answerToolCalls(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
  answers: ClientToolResult[],
): Promise<ToolAnswerReport> {
  return atomically(ctx, sessionId, (_cell, nowMs) => {
    if (!liveRecords(ctx, sessionId, turnId, nowMs)) throw turnNotRunning(sessionId, turnId);
    const records = touched(ctx, sessionId, turnId, nowMs);
    const report: ToolAnswerReport = { accepted: [], ignored: [] };
    for (const answer of answers) {
      if (records.calls.get(answer.callId)?.status === "pending") {
        records.calls.set(answer.callId, {
          callId: answer.callId,
          status: "answered",
          answer: copy(answer),
        });
        report.accepted.push(answer.callId);
      } else {
        report.ignored.push(answer.callId);
      }
    }
    return report;
  });
}

export function closeToolCalls(
  ctx: MemoryContext,
  fence: LeaseFence,
  turnId: string,
  callIds: string[] | undefined,
): Promise<ToolCallState[]> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    const records = liveRecords(ctx, fence.sessionId, turnId, nowMs);
    if (!records) return [];
    records.expiresAtMs = nowMs + TOOL_CALL_RETENTION_MS;
    const named = callIds ?? [...records.calls.keys()];
    return named.flatMap((callId) => {
      const state = records.calls.get(callId);
      if (!state) return [];
      if (state.status === "pending") records.calls.set(callId, { callId, status: "closed" });
      return [copy(records.calls.get(callId) as ToolCallState)];
    });
  });
}

export function readToolCalls(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
): Promise<ToolCallState[]> {
  return atomically(ctx, sessionId, (_cell, nowMs) => {
    const records = liveRecords(ctx, sessionId, turnId, nowMs);
    return records ? [...records.calls.values()].map(copy) : [];
  });
}
