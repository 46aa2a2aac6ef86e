// Queued-work operations of the memory store: enqueue, list, cancel and the two claims.
import { randomUUID } from "node:crypto";
import { sourceKeyConflict, unknownBatchIds } from "../../domain/errors.js";
import { type BatchId, type ClaimId, type SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import {
  newQueuedBatch,
  WORK_CLASS_ORDER,
  type CancelReport,
  type CancelStatus,
  type ClaimBoundary,
  type ClaimByIdsReport,
  type EnqueueReceipt,
  type QueuedWorkBatch,
  type QueuedWorkClaim,
  type QueuedWorkDraft,
} from "../../domain/queue.js";
import { queuedWorkHash } from "../shared/content-hash.js";
import { atomically, type MemoryContext } from "./context.js";
import { copy, createImplicitly, requireLiveFence, type SessionCell } from "./session-cell.js";

export function enqueueWork(ctx: MemoryContext, draft: QueuedWorkDraft): Promise<EnqueueReceipt> {
  const contentHash = queuedWorkHash(draft);
  return atomically(ctx, draft.sessionId, (cell) => {
    if (draft.sourceKey) {
      const seen = cell.workSourceKeys.get(draft.sourceKey);
      if (seen) {
        if (seen.contentHash !== contentHash)
          throw sourceKeyConflict(cell.sessionId, draft.sourceKey);
        const existing = cell.batches.get(seen.id);
        if (existing) return { batch: copy(existing), deduplicated: true };
      }
    }
    const batch = newQueuedBatch(draft, randomUUID() as BatchId, ++cell.workSeq);
    cell.batches.set(batch.batchId, batch);
    createImplicitly(cell);
    if (draft.sourceKey)
      cell.workSourceKeys.set(draft.sourceKey, { id: batch.batchId, contentHash });
    return { batch: copy(batch), deduplicated: false };
  });
}

export function listWork(ctx: MemoryContext, sessionId: SessionId): Promise<QueuedWorkBatch[]> {
  return atomically(ctx, sessionId, (cell) =>
    [...cell.batches.values()]
      .filter((b) => b.state === "ready" || b.state === "claimed")
      .map(copy),
  );
}

export function cancelWork(
  ctx: MemoryContext,
  sessionId: SessionId,
  ids: BatchId[],
): Promise<CancelReport<BatchId>> {
  return atomically(ctx, sessionId, (cell) => ({
    outcomes: ids.map((id) => {
      const batch = cell.batches.get(id);
      let status: CancelStatus;
      if (!batch) status = "not_found";
      else if (batch.state === "ready") {
        batch.state = "cancelled";
        status = "cancelled";
      } else status = `already_${batch.state}`;
      return { id, status };
    }),
  }));
}

/** Ready, or claimed by a generation the fence has superseded. */
function claimable(batch: QueuedWorkBatch, fencingToken: number): boolean {
  return (
    batch.state === "ready" || (batch.state === "claimed" && batch.claimFencingToken < fencingToken)
  );
}

function markClaimed(
  batches: QueuedWorkBatch[],
  fence: LeaseFence,
  cell: SessionCell,
): QueuedWorkClaim {
  const claimId = randomUUID() as ClaimId;
  for (const batch of batches) {
    batch.state = "claimed";
    batch.claimFencingToken = fence.fencingToken;
    batch.claimId = claimId;
  }
  return {
    claimId,
    sessionId: cell.sessionId,
    fencingToken: fence.fencingToken,
    batches: batches.map(copy),
  };
}

export function claimReadyWork(
  ctx: MemoryContext,
  fence: LeaseFence,
  boundary: ClaimBoundary,
  maxBatches: number,
): Promise<QueuedWorkClaim | undefined> {
  return atomically(ctx, fence.sessionId, async (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    await ctx.afterClaimValidation?.();
    // A parked turn holds the session: new turns wait for it (its resume takes its own claims).
    if (boundary === "idle" && cell.parked) return undefined;
    const eligible = [...cell.batches.values()]
      .filter((b) => claimable(b, fence.fencingToken))
      .filter((b) => boundary === "idle" || b.deliveryPolicy === "earliest_safe_boundary")
      .sort(
        (a, b) =>
          WORK_CLASS_ORDER.indexOf(a.workClass) - WORK_CLASS_ORDER.indexOf(b.workClass) ||
          a.enqueueSeq - b.enqueueSeq,
      );
    const leader = eligible[0];
    if (!leader) return undefined;
    const taken =
      leader.slotPolicy === "exclusive"
        ? [leader]
        : eligible
            .filter(
              (b) =>
                b.slotPolicy === "join" &&
                b.workClass === leader.workClass &&
                b.deliveryPolicy === leader.deliveryPolicy &&
                b.mergeKey === leader.mergeKey,
            )
            .slice(0, maxBatches);
    return markClaimed(taken, fence, cell);
  });
}

export function claimWorkByIds(
  ctx: MemoryContext,
  fence: LeaseFence,
  ids: BatchId[],
): Promise<ClaimByIdsReport> {
  return atomically(ctx, fence.sessionId, async (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    await ctx.afterClaimValidation?.();
    const missing = ids.filter((id) => !cell.batches.has(id));
    if (missing.length > 0) throw unknownBatchIds(cell.sessionId, missing);
    const statuses: ClaimByIdsReport["statuses"] = [];
    const toClaim: QueuedWorkBatch[] = [];
    for (const id of new Set(ids)) {
      const batch = cell.batches.get(id) as QueuedWorkBatch;
      const ours = batch.state === "claimed" && batch.claimFencingToken === fence.fencingToken;
      if (claimable(batch, fence.fencingToken) || ours) {
        toClaim.push(batch);
        statuses.push({ batchId: id, status: "claimed_now" });
      } else {
        statuses.push({ batchId: id, status: "already_satisfied" });
      }
    }
    return { claim: toClaim.length > 0 ? markClaimed(toClaim, fence, cell) : undefined, statuses };
  });
}
