// The store port: commits, leases, queued work, turn inputs and maintenance. Every backend passes
// the shared conformance suite (test/conformance); the in-memory store is the reference.
import type { BatchId, SessionId } from "../domain/ids.js";
import type {
  DeferReport,
  InputCancelReport,
  InputCancelSelector,
  InputClaimPoint,
  PendingTurnInput,
  SubmitInputReceipt,
  TurnInputClaim,
  TurnInputDraft,
} from "../domain/inputs.js";
import type {
  LeaseClaimOutcome,
  LeaseFence,
  LeaseOwner,
  LeaseReleaseOutcome,
  SessionExecutionLease,
} from "../domain/lease.js";
import type {
  CancelReport,
  ClaimBoundary,
  ClaimByIdsReport,
  EnqueueReceipt,
  QueuedWorkBatch,
  QueuedWorkClaim,
  QueuedWorkDraft,
} from "../domain/queue.js";
import type {
  CommitReceipt,
  RuntimeCommit,
  SessionListPage,
  SessionSnapshot,
  TranscriptMark,
  VacuumReport,
} from "../domain/session.js";

export interface SessionCommitStore {
  /** Applies the commit in one atomic step (head CAS, stamp, claim completions, lease release). */
  commit(commit: RuntimeCommit): Promise<CommitReceipt>;
  /**
   * Undefined when the session has no commit yet (or was deleted). With a mark whose epoch is
   * the transcript's, only the messages after the mark's count are returned (`messagesFrom`);
   * otherwise the whole transcript, as without a mark.
   */
  loadSession(sessionId: SessionId, since?: TranscriptMark): Promise<SessionSnapshot | undefined>;
  /** Removes the session's state, queue and inputs; the lease generation counter survives. */
  deleteSession(sessionId: SessionId): Promise<boolean>;
  /** Sessions with at least one commit, in id order; the index is a hint repaired on commit. */
  listSessions(options: {
    prefix?: string;
    cursor?: string;
    limit: number;
  }): Promise<SessionListPage>;
}

export interface SessionExecutionLeaseStore {
  tryClaimLease(sessionId: SessionId, owner: LeaseOwner, ttlMs: number): Promise<LeaseClaimOutcome>;
  /** Extends the exact fence's lease; a stale fence gets SessionExecutionLeaseExpired. */
  renewLease(fence: LeaseFence, ttlMs: number): Promise<SessionExecutionLease>;
  /** Fenced and idempotent: a stale or old release never clears a newer lease. */
  releaseLease(fence: LeaseFence): Promise<LeaseReleaseOutcome>;
  /** Takes over before TTL only from the observed, still-current, provably dead holder. */
  reclaimLease(
    sessionId: SessionId,
    claimant: LeaseOwner,
    observed: LeaseFence,
    ttlMs: number,
  ): Promise<LeaseClaimOutcome>;
  /** The current live lease, if any. */
  currentLease(sessionId: SessionId): Promise<SessionExecutionLease | undefined>;
}

export interface QueuedWorkStore {
  enqueueWork(draft: QueuedWorkDraft): Promise<EnqueueReceipt>;
  /** Every batch that is not a tombstone, in enqueue order. */
  listWork(sessionId: SessionId): Promise<QueuedWorkBatch[]>;
  /** Cancels unclaimed batches only. */
  cancelWork(sessionId: SessionId, batchIds: BatchId[]): Promise<CancelReport<BatchId>>;
  /** Undefined when nothing is claimable at that boundary. */
  claimReadyWork(
    fence: LeaseFence,
    boundary: ClaimBoundary,
    maxBatches: number,
  ): Promise<QueuedWorkClaim | undefined>;
  claimWorkByIds(fence: LeaseFence, batchIds: BatchId[]): Promise<ClaimByIdsReport>;
}

export interface TurnInputStore {
  submitInput(draft: TurnInputDraft): Promise<SubmitInputReceipt>;
  /** Pending and claimed inputs in submission order (tombstones excluded). */
  listInputs(sessionId: SessionId): Promise<PendingTurnInput[]>;
  cancelInputs(sessionId: SessionId, selector: InputCancelSelector): Promise<InputCancelReport>;
  claimInputs(
    fence: LeaseFence,
    point: InputClaimPoint,
    maxInputs: number,
  ): Promise<TurnInputClaim | undefined>;
  /** Pending active-turn inputs of `turnId` become next-turn inputs, exactly once. */
  deferActiveInputs(fence: LeaseFence, turnId: string): Promise<DeferReport>;
}

export interface StoreMaintenance {
  /** Removes completed and cancelled tombstones of a session. */
  vacuum(sessionId: SessionId): Promise<VacuumReport>;
  close(): Promise<void>;
}

export interface RuntimeStore
  extends
    SessionCommitStore,
    SessionExecutionLeaseStore,
    QueuedWorkStore,
    TurnInputStore,
    StoreMaintenance {}

export interface StoreLimits {
  /** Largest payload or message accepted, in bytes (UTF-8). */
  maxPayloadBytes: number;
  maxBatchesPerClaim: number;
}

export const DEFAULT_STORE_LIMITS: StoreLimits = {
  maxPayloadBytes: 1024 * 1024,
  maxBatchesPerClaim: 256,
};
