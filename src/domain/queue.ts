// Queued work: durable non-user work for a session, claimed in batches under a lease generation.
import type { BatchId, ClaimId, SessionId } from "./ids.js";

export type DeliveryPolicy = "earliest_safe_boundary" | "after_current_turn_commit";
export type SlotPolicy = "join" | "exclusive";
/** Drain order: session commands before turn-producing work. */
export type QueuedWorkClass = "session_command" | "turn_work";
export const WORK_CLASS_ORDER: readonly QueuedWorkClass[] = ["session_command", "turn_work"];

/**
 * Where the claimant stands: `idle` (no turn running) may take everything ready;
 * `active_turn_checkpoint` only work whose delivery policy is `earliest_safe_boundary`.
 */
export type ClaimBoundary = "idle" | "active_turn_checkpoint";

export interface QueuedWorkDraft {
  sessionId: SessionId;
  workClass: QueuedWorkClass;
  deliveryPolicy: DeliveryPolicy;
  slotPolicy: SlotPolicy;
  /** Join batches claim together only when their merge keys are equal. */
  mergeKey?: string;
  /** Idempotency key: the same key with the same content returns the existing batch. */
  sourceKey?: string;
  payload: string;
}

export type QueuedWorkState = "ready" | "claimed" | "completed" | "cancelled";

export interface QueuedWorkBatch {
  batchId: BatchId;
  sessionId: SessionId;
  enqueueSeq: number;
  workClass: QueuedWorkClass;
  deliveryPolicy: DeliveryPolicy;
  slotPolicy: SlotPolicy;
  mergeKey: string;
  sourceKey: string;
  payload: string;
  state: QueuedWorkState;
  /** Fencing token of the generation that holds the claim, 0 when never claimed. */
  claimFencingToken: number;
  claimId: string;
}

/** A batch as enqueueing stores it: ready, unclaimed, with the sequence the store assigned. */
export function newQueuedBatch(
  draft: QueuedWorkDraft,
  batchId: BatchId,
  enqueueSeq: number,
): QueuedWorkBatch {
  return {
    batchId,
    sessionId: draft.sessionId,
    enqueueSeq,
    workClass: draft.workClass,
    deliveryPolicy: draft.deliveryPolicy,
    slotPolicy: draft.slotPolicy,
    mergeKey: draft.mergeKey ?? "",
    sourceKey: draft.sourceKey ?? "",
    payload: draft.payload,
    state: "ready",
    claimFencingToken: 0,
    claimId: "",
  };
}

export interface EnqueueReceipt {
  batch: QueuedWorkBatch;
  /** True when a source key matched an existing batch and nothing new was stored. */
  deduplicated: boolean;
}

export interface QueuedWorkClaim {
  claimId: ClaimId;
  sessionId: SessionId;
  fencingToken: number;
  batches: QueuedWorkBatch[];
}

/** What a commit names to settle a claim. */
export interface QueuedWorkClaimCompletion {
  claimId: ClaimId;
  sessionId: SessionId;
  fencingToken: number;
  batchIds: BatchId[];
}

export function queueClaimCompletion(claim: QueuedWorkClaim): QueuedWorkClaimCompletion {
  return {
    claimId: claim.claimId,
    sessionId: claim.sessionId,
    fencingToken: claim.fencingToken,
    batchIds: claim.batches.map((b) => b.batchId),
  };
}

export type ClaimByIdStatus = "claimed_now" | "already_satisfied";

export interface ClaimByIdsReport {
  claim: QueuedWorkClaim | undefined;
  statuses: { batchId: BatchId; status: ClaimByIdStatus }[];
}

export type CancelStatus =
  "cancelled" | "already_claimed" | "already_completed" | "already_cancelled" | "not_found";

export interface CancelReport<Id extends string> {
  outcomes: { id: Id; status: CancelStatus }[];
}
