// Client tool call records of the Redis store: one hash per turn, in the session's slot, each
// change one script that checks before it writes. The hash expires after the last change.
import { leaseExpired, turnNotRunning } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import {
  TOOL_CALL_RETENTION_MS,
  type ClientToolResult,
  type ToolAnswerReport,
  type ToolCallState,
} from "../../domain/tool-calls.js";
import { logFenceRefused } from "../shared/store-log.js";
import { str } from "./codec.js";
import type { RedisContext } from "./context.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

interface StoredCall {
  s: "p" | "a" | "c";
  o?: string;
  e?: boolean;
}

function decodeState(callId: string, raw: string): ToolCallState {
  const stored = JSON.parse(raw) as StoredCall;
  if (stored.s === "a") {
    return {
      callId,
      status: "answered",
      answer: { callId, output: stored.o ?? "", isError: stored.e === true },
    };
  }
  return stored.s === "c" ? { callId, status: "closed" } : { callId, status: "pending" };
}

function statePairs(reply: ScriptReply): ToolCallState[] {
  const states: ToolCallState[] = [];
  for (let i = 1; i + 1 < reply.length; i += 2) {
    states.push(decodeState(str(reply, i), str(reply, i + 1)));
  }
  return states;
}

function refused(ctx: RedisContext, operation: string, fence: LeaseFence): never {
  logFenceRefused(ctx.log, operation, fence);
  throw leaseExpired(fence.sessionId, fence.fencingToken);
}

export async function recordToolCalls(
  ctx: RedisContext,
  fence: LeaseFence,
  turnId: string,
  callIds: string[],
): Promise<ToolCallState[]> {
  const k = ctx.keys(fence.sessionId);
  const reply = await ctx.scripts.run(
    "recordToolCalls",
    [k.lease, k.toolCalls(turnId)],
    [fence.leaseToken, fence.fencingToken, TOOL_CALL_RETENTION_MS, ...callIds],
  );
  if (reply[0] !== REPLY.OK) refused(ctx, "recordToolCalls", fence);
  return callIds.map((callId, i) => decodeState(callId, str(reply, i + 1)));
}

export async function answerToolCalls(
  ctx: RedisContext,
  sessionId: SessionId,
  turnId: string,
  answers: ClientToolResult[],
): Promise<ToolAnswerReport> {
  const reply = await ctx.scripts.run(
    "answerToolCalls",
    [ctx.keys(sessionId).toolCalls(turnId)],
    [
      TOOL_CALL_RETENTION_MS,
      ...answers.flatMap((a) => [a.callId, a.output, a.isError ? "1" : "0"]),
    ],
  );
  if (reply[0] === REPLY.NONE) throw turnNotRunning(sessionId, turnId);
  const report: ToolAnswerReport = { accepted: [], ignored: [] };
  for (let i = 1; i + 1 < reply.length; i += 2) {
    (str(reply, i + 1) === "accepted" ? report.accepted : report.ignored).push(str(reply, i));
  }
  return report;
}

export async function closeToolCalls(
  ctx: RedisContext,
  fence: LeaseFence,
  turnId: string,
  callIds: string[] | undefined,
): Promise<ToolCallState[]> {
  const k = ctx.keys(fence.sessionId);
  const reply = await ctx.scripts.run(
    "closeToolCalls",
    [k.lease, k.toolCalls(turnId)],
    [fence.leaseToken, fence.fencingToken, TOOL_CALL_RETENTION_MS, ...(callIds ?? [])],
  );
  if (reply[0] !== REPLY.OK) refused(ctx, "closeToolCalls", fence);
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
