// Client tool call records of the Redis store: one hash per turn, in the session's slot, each
// change one script that checks before it writes. The hash expires after the last change.
import { turnNotRunning } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import {
  TOOL_CALL_RETENTION_MS,
  type ApprovalDecision,
  type ClientToolResult,
  type ToolAnswerReport,
  type ToolCallState,
  type ToolWait,
} from "../../domain/tool-calls.js";
import {
  decisionRecord,
  stateOf,
  waitField,
  waitOf,
  type StoredAnswer,
} from "../shared/wait-codec.js";
import { str } from "./codec.js";
import type { RedisContext } from "./context.js";
import { refuseFence } from "./fence-refusal.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

interface StoredCall {
  s: "p" | "a" | "c";
  o?: string;
  e?: boolean;
}

function decodeState(field: string, raw: string): ToolCallState {
  const stored = JSON.parse(raw) as StoredCall;
  if (stored.s === "a") {
    return stateOf(field, "answered", { output: stored.o ?? "", isError: stored.e === true });
  }
  return stateOf(field, stored.s === "c" ? "closed" : "pending");
}

function statePairs(reply: ScriptReply): ToolCallState[] {
  const states: ToolCallState[] = [];
  for (let i = 1; i + 1 < reply.length; i += 2) {
    states.push(decodeState(str(reply, i), str(reply, i + 1)));
  }
  return states;
}

export async function recordToolCalls(
  ctx: RedisContext,
  fence: LeaseFence,
  turnId: string,
  waits: ToolWait[],
): Promise<ToolCallState[]> {
  const k = ctx.keys(fence.sessionId);
  const fields = waits.map(waitField);
  const reply = await ctx.scripts.run(
    "recordToolCalls",
    [k.lease, k.toolCalls(turnId)],
    [fence.leaseToken, fence.fencingToken, TOOL_CALL_RETENTION_MS, ...fields],
  );
  if (reply[0] !== REPLY.OK) refuseFence(ctx, "recordToolCalls", fence);
  return fields.map((field, i) => decodeState(field, str(reply, i + 1)));
}

/**
 * Stores the first answer of each pending wait. Results and decisions share the one script
 * (answerToolCalls-1.lua): a decision is a stored answer of the approval's field (wait-codec.ts).
 */
async function storeAnswers(
  ctx: RedisContext,
  sessionId: SessionId,
  turnId: string,
  answers: { field: string; answer: StoredAnswer }[],
): Promise<ToolAnswerReport> {
  const reply = await ctx.scripts.run(
    "answerToolCalls",
    [ctx.keys(sessionId).toolCalls(turnId)],
    [
      TOOL_CALL_RETENTION_MS,
      ...answers.flatMap((a) => [a.field, a.answer.output, a.answer.isError ? "1" : "0"]),
    ],
  );
  if (reply[0] === REPLY.NONE) throw turnNotRunning(sessionId, turnId);
  const report: ToolAnswerReport = { accepted: [], ignored: [] };
  for (let i = 1; i + 1 < reply.length; i += 2) {
    const callId = waitOf(str(reply, i)).callId;
    (str(reply, i + 1) === "accepted" ? report.accepted : report.ignored).push(callId);
  }
  return report;
}

export function answerToolCalls(
  ctx: RedisContext,
  sessionId: SessionId,
  turnId: string,
  answers: ClientToolResult[],
): Promise<ToolAnswerReport> {
  const stored = answers.map((a) => ({
    field: waitField({ kind: "result", callId: a.callId }),
    answer: { output: a.output, isError: a.isError },
  }));
  return storeAnswers(ctx, sessionId, turnId, stored);
}

export function decideApprovals(
  ctx: RedisContext,
  sessionId: SessionId,
  turnId: string,
  decisions: ApprovalDecision[],
): Promise<ToolAnswerReport> {
  const stored = decisions.map((d) => ({
    field: waitField({ kind: "approval", callId: d.callId }),
    answer: decisionRecord(d),
  }));
  return storeAnswers(ctx, sessionId, turnId, stored);
}

export async function closeToolCalls(
  ctx: RedisContext,
  fence: LeaseFence,
  turnId: string,
  waits: ToolWait[] | undefined,
): Promise<ToolCallState[]> {
  const k = ctx.keys(fence.sessionId);
  const fields = (waits ?? []).map(waitField);
  const reply = await ctx.scripts.run(
    "closeToolCalls",
    [k.lease, k.toolCalls(turnId)],
    [fence.leaseToken, fence.fencingToken, TOOL_CALL_RETENTION_MS, ...fields],
  );
  if (reply[0] !== REPLY.OK) refuseFence(ctx, "closeToolCalls", fence);
  return statePairs(reply);
}

export async function readToolCalls(
  ctx: RedisContext,
  sessionId: SessionId,
  turnId: string,
): Promise<ToolCallState[]> {
  const reply = await ctx.scripts.run("readToolCalls", [ctx.keys(sessionId).toolCalls(turnId)], []);
  return statePairs(reply);
}
