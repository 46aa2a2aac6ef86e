// Client tool call records of the memory store. They live beside the session cells, not in them,
// so like Redis's expiring keys they outlive a deleted session until their retention ends.
import { turnNotRunning } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import {
  TOOL_CALL_RETENTION_MS,
  type ApprovalDecision,
  type ClientToolResult,
  type SettledWait,
  type ToolAnswerReport,
  type ToolCallState,
  type ToolWait,
} from "../../domain/tool-calls.js";
import { waitField } from "../shared/wait-codec.js";
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
  waits: ToolWait[],
): Promise<ToolCallState[]> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    const records = touched(ctx, fence.sessionId, turnId, nowMs);
    return waits.map((wait) => {
      const field = waitField(wait);
      const state = records.calls.get(field) ?? { ...wait, status: "pending" };
      records.calls.set(field, state);
      return copy(state);
    });
  });
}

/** The first settlement of each pending wait is stored (keyed as Redis keys it, wait-codec.ts). */
function settle(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
  settled: SettledWait[],
): Promise<ToolAnswerReport> {
  return atomically(ctx, sessionId, (_cell, nowMs) => {
    if (!liveRecords(ctx, sessionId, turnId, nowMs)) throw turnNotRunning(sessionId, turnId);
    const records = touched(ctx, sessionId, turnId, nowMs);
    const report: ToolAnswerReport = { accepted: [], ignored: [] };
    for (const state of settled) {
      const field = waitField(state);
      if (records.calls.get(field)?.status === "pending") {
        records.calls.set(field, copy(state));
        report.accepted.push(state.callId);
      } else {
        report.ignored.push(state.callId);
      }
    }
    return report;
  });
}

export function answerToolCalls(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
  answers: ClientToolResult[],
): Promise<ToolAnswerReport> {
  const settled = answers.map((answer): SettledWait => ({
    kind: "result",
    callId: answer.callId,
    status: "answered",
    answer,
  }));
  return settle(ctx, sessionId, turnId, settled);
}

export function decideApprovals(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
  decisions: ApprovalDecision[],
): Promise<ToolAnswerReport> {
  const settled = decisions.map((decision): SettledWait => ({
    kind: "approval",
    callId: decision.callId,
    status: "decided",
    decision,
  }));
  return settle(ctx, sessionId, turnId, settled);
}

export function closeToolCalls(
  ctx: MemoryContext,
  fence: LeaseFence,
  turnId: string,
  waits: ToolWait[] | undefined,
): Promise<ToolCallState[]> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    return closeTurnCalls(ctx, fence.sessionId, turnId, nowMs, waits);
  });
}

/**
 * Inside a session's step: closes the turn's named calls (every recorded one without names),
 * pending ones closed and answered ones kept; closeToolCalls, and a commit announcing the turn.
 */
export function closeTurnCalls(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
  nowMs: number,
  waits?: ToolWait[],
): ToolCallState[] {
  const records = liveRecords(ctx, sessionId, turnId, nowMs);
  if (!records) return [];
  records.expiresAtMs = nowMs + TOOL_CALL_RETENTION_MS;
  const named = waits?.map(waitField) ?? [...records.calls.keys()];
  return named.flatMap((field) => {
    const state = records.calls.get(field);
    if (!state) return [];
    if (state.status === "pending") records.calls.set(field, { ...state, status: "closed" });
    return [copy(records.calls.get(field) as ToolCallState)];
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
