// Parked turns of the Redis store: one hash per session in the session's slot (fields in
// lua/parkTurn-8-9.lua); park, resume, cancel and read are one script each.
import { randomUUID } from "node:crypto";
import {
  parkedTurnMismatch,
  queuedWorkClaimSuperseded,
  turnInputClaimSuperseded,
} from "../../domain/errors.js";
import type { BatchId, ClaimId, InputId, SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import type {
  ParkReceipt,
  ParkTurnDraft,
  ParkedTurn,
  ParkedTurnStatus,
  ResumeOutcome,
} from "../../domain/parked-turns.js";
import { TOOL_CALL_RETENTION_MS } from "../../domain/tool-calls.js";
import { tenantOfOutbox } from "../../domain/webhooks.js";
import { waitField, waitOf } from "../shared/wait-codec.js";
import { decodeBatch, decodeInput, int, pairs, str } from "./codec.js";
import type { RedisContext } from "./context.js";
import { refuseFence } from "./fence-refusal.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

/** The parked hash from `count` field/value strings of `reply` starting at `from`. */
export function decodeParked(
  sessionId: SessionId,
  reply: ScriptReply,
  from: number,
  count: number,
): ParkedTurn {
  const f: Record<string, string> = {};
  for (let i = from; i + 1 < from + count; i += 2) f[str(reply, i)] = str(reply, i + 1);
  return {
    sessionId,
    turnId: f.turn ?? "",
    waitingOn: (JSON.parse(f.wait ?? "[]") as string[]).map(waitOf),
    progress: f.prog ?? "",
    inputIds: JSON.parse(f.inp ?? "[]") as InputId[],
    batchIds: JSON.parse(f.bat ?? "[]") as BatchId[],
    parkedAtMs: Number(f.at),
    expiresAtMs: Number(f.exp),
    fencingToken: Number(f.gen),
    cancelRequested: f.cxl === "1",
  };
}

export async function parkTurn(
  ctx: RedisContext,
  fence: LeaseFence,
  draft: ParkTurnDraft,
): Promise<ParkReceipt> {
  const sessionId = fence.sessionId;
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "parkTurn",
    [
      k.lease,
      k.parked,
      k.toolCalls(draft.turnId),
      k.inputs,
      k.work,
      k.outbox,
      k.turnRecords,
      k.turnOrder,
      // The hint index where it is on the outbox's server (ADR 0021 "The hint dropped in the
      // settle"): the park lists the outbox with its row, in its step. Not on Cluster.
      ...(ctx.outboxFoldKeys ? [ctx.outboxFoldKeys(tenantOfOutbox(sessionId))[0]] : []),
    ],
    [
      fence.leaseToken,
      fence.fencingToken,
      draft.turnId,
      draft.ttlMs,
      TOOL_CALL_RETENTION_MS,
      draft.progress,
      JSON.stringify(draft.waitingOn.map(waitField)),
      JSON.stringify(draft.inputIds),
      JSON.stringify(draft.batchIds),
      draft.webhookEvent?.id ?? "",
      draft.webhookEvent ? JSON.stringify(draft.webhookEvent) : "",
      sessionId,
      draft.outboxExpect?.nowMs ?? "",
      draft.outboxExpect?.dueAtMs ?? "",
    ],
  );
  switch (reply[0]) {
    case REPLY.OK:
      return { resumable: int(reply, 1) === 1, expiresAtMs: int(reply, 2) };
    case REPLY.PARKED_MISMATCH:
      throw parkedTurnMismatch(draft.turnId, str(reply, 1));
    case REPLY.INPUT_CLAIM_SUPERSEDED:
      throw turnInputClaimSuperseded(sessionId, str(reply, 1));
    case REPLY.QUEUE_CLAIM_SUPERSEDED:
      throw queuedWorkClaimSuperseded(sessionId, str(reply, 1));
    default:
      return refuseFence(ctx, "parkTurn", fence);
  }
}

export async function resumeTurn(
  ctx: RedisContext,
  fence: LeaseFence,
  turnId: string,
): Promise<ResumeOutcome | undefined> {
  const sessionId = fence.sessionId;
  const k = ctx.keys(sessionId);
  const inputClaimId = randomUUID() as ClaimId;
  const workClaimId = randomUUID() as ClaimId;
  const reply = await ctx.scripts.run(
    "resumeTurn",
    [
      k.lease,
      k.parked,
      k.toolCalls(turnId),
      k.inputs,
      k.inputPayloads,
      k.work,
      k.workPayloads,
      k.turnRecords,
      k.turnOrder,
    ],
    [fence.leaseToken, fence.fencingToken, turnId, inputClaimId, workClaimId],
  );
  if (reply[0] === REPLY.LEASE_EXPIRED) refuseFence(ctx, "resumeTurn", fence);
  if (reply[0] === REPLY.NONE) return undefined;
  const status = str(reply, 1) as ParkedTurnStatus;
  const fieldCount = int(reply, 2);
  const parked = decodeParked(sessionId, reply, 3, fieldCount);
  if (status === "waiting") return { status, parked };
  let at = 3 + fieldCount;
  const inputCount = int(reply, at);
  const inputs = pairs(reply.slice(0, at + 1 + 2 * inputCount) as ScriptReply, at + 1, (m, p) =>
    decodeInput(sessionId, m, p),
  );
  at += 1 + 2 * inputCount;
  const batches = pairs(reply, at + 1, (m, p) => decodeBatch(sessionId, m, p));
  const claim = { sessionId, fencingToken: fence.fencingToken };
  return {
    status,
    parked,
    inputClaim: inputs.length === 0 ? undefined : { ...claim, claimId: inputClaimId, inputs },
    workClaim: batches.length === 0 ? undefined : { ...claim, claimId: workClaimId, batches },
  };
}

export async function cancelParkedTurn(
  ctx: RedisContext,
  sessionId: SessionId,
  turnId: string | undefined,
): Promise<boolean> {
  const reply = await ctx.scripts.run(
    "cancelParkedTurn",
    [ctx.keys(sessionId).parked],
    [turnId ?? ""],
  );
  return reply[0] === REPLY.OK;
}

export async function readParkedTurn(
  ctx: RedisContext,
  sessionId: SessionId,
): Promise<ParkedTurn | undefined> {
  const reply = await ctx.scripts.run("readParkedTurn", [ctx.keys(sessionId).parked], []);
  if (reply[0] === REPLY.NONE) return undefined;
  return decodeParked(sessionId, reply, 1, reply.length - 1);
}
