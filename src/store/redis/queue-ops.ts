// Queued-work operations of the Redis store: enqueue, list, cancel and the two claims.
import { randomUUID } from "node:crypto";
import { sourceKeyConflict, unknownBatchIds } from "../../domain/errors.js";
import { type BatchId, type ClaimId, type SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import {
  newQueuedBatch,
  type CancelReport,
  type CancelStatus,
  type ClaimBoundary,
  type ClaimByIdStatus,
  type ClaimByIdsReport,
  type EnqueueReceipt,
  type QueuedWorkBatch,
  type QueuedWorkClaim,
  type QueuedWorkDraft,
} from "../../domain/queue.js";
import { queuedWorkHash } from "../shared/content-hash.js";
import { decodeBatch, int, pairs, str } from "./codec.js";
import type { RedisContext } from "./context.js";
import { refuseFence } from "./fence-refusal.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

export async function enqueueWork(
  ctx: RedisContext,
  draft: QueuedWorkDraft,
): Promise<EnqueueReceipt> {
  const sessionId = draft.sessionId;
  const k = ctx.keys(sessionId);
  const batchId = randomUUID() as BatchId;
  const reply = await ctx.scripts.run(
    "enqueueWork",
    [k.work, k.workPayloads, k.workIndex, k.workSources, k.sequences, k.head],
    [
      batchId,
      draft.sourceKey ?? "",
      queuedWorkHash(draft),
      draft.workClass,
      draft.deliveryPolicy,
      draft.slotPolicy,
      draft.mergeKey ?? "",
      draft.payload,
    ],
  );
  if (reply[0] === REPLY.SOURCE_KEY_CONFLICT)
    throw sourceKeyConflict(sessionId, draft.sourceKey ?? "");
  // Equal content hashes mean equal payloads, so the payload is never sent back.
  if (reply[0] === REPLY.DEDUPLICATED) {
    return { batch: decodeBatch(sessionId, reply[1] ?? null, draft.payload), deduplicated: true };
  }
  // The batch created the session: the session list learns of it as it does of a commit.
  if (int(reply, 2) === 1) ctx.noteSession(sessionId);
  return {
    batch: newQueuedBatch(draft, batchId, int(reply, 1)),
    deduplicated: false,
  };
}

export async function listWork(
  ctx: RedisContext,
  sessionId: SessionId,
): Promise<QueuedWorkBatch[]> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run("listWork", [k.work, k.workPayloads, k.workIndex], []);
  return pairs(reply, 1, (meta, payload) => decodeBatch(sessionId, meta, payload));
}

export async function cancelWork(
  ctx: RedisContext,
  sessionId: SessionId,
  ids: BatchId[],
): Promise<CancelReport<BatchId>> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run("cancelWork", [k.work, k.workIndex], ids);
  return { outcomes: statusPairs<BatchId, CancelStatus>(reply, 1, reply.length) };
}

export function statusPairs<Id, Status>(
  reply: ScriptReply,
  start: number,
  end: number,
): { id: Id; status: Status }[] {
  const out: { id: Id; status: Status }[] = [];
  for (let i = start; i + 1 < end; i += 2) {
    out.push({ id: str(reply, i) as Id, status: str(reply, i + 1) as Status });
  }
  return out;
}

function claimOf(
  sessionId: SessionId,
  claimId: ClaimId,
  fence: LeaseFence,
  batches: QueuedWorkBatch[],
): QueuedWorkClaim {
  return { claimId, sessionId, fencingToken: fence.fencingToken, batches };
}

export async function claimReadyWork(
  ctx: RedisContext,
  fence: LeaseFence,
  boundary: ClaimBoundary,
  maxBatches: number,
): Promise<QueuedWorkClaim | undefined> {
  const sessionId = fence.sessionId;
  const k = ctx.keys(sessionId);
  const claimId = randomUUID() as ClaimId;
  const reply = await ctx.scripts.run(
    "claimReadyWork",
    [k.lease, k.work, k.workPayloads, k.workIndex, k.parked],
    [fence.leaseToken, fence.fencingToken, boundary, maxBatches, claimId],
  );
  if (reply[0] === REPLY.LEASE_EXPIRED) refuseFence(ctx, "claimReadyWork", fence);
  if (reply[0] === REPLY.NONE) return undefined;
  const batches = pairs(reply, 1, (meta, payload) => decodeBatch(sessionId, meta, payload));
  return claimOf(sessionId, claimId, fence, batches);
}

export async function claimWorkByIds(
  ctx: RedisContext,
  fence: LeaseFence,
  ids: BatchId[],
): Promise<ClaimByIdsReport> {
  const sessionId = fence.sessionId;
  const k = ctx.keys(sessionId);
  const claimId = randomUUID() as ClaimId;
  const reply = await ctx.scripts.run(
    "claimWorkByIds",
    [k.lease, k.work, k.workPayloads],
    [fence.leaseToken, fence.fencingToken, claimId, ...ids],
  );
  if (reply[0] === REPLY.LEASE_EXPIRED) refuseFence(ctx, "claimWorkByIds", fence);
  if (reply[0] === REPLY.UNKNOWN_IDS) {
    throw unknownBatchIds(
      sessionId,
      reply.slice(1).map((_, i) => str(reply, i + 1)),
    );
  }
  const end = 2 + 2 * int(reply, 1);
  const statuses = statusPairs<BatchId, ClaimByIdStatus>(reply, 2, end).map(({ id, status }) => ({
    batchId: id,
    status,
  }));
  const batches = pairs(reply, end, (meta, payload) => decodeBatch(sessionId, meta, payload));
  return {
    claim: batches.length > 0 ? claimOf(sessionId, claimId, fence, batches) : undefined,
    statuses,
  };
}
