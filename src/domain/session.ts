// Committed session state and the commit that advances it.
import type { TenantCommitCharges } from "./tenant-charges.js";
import type { SessionId } from "./ids.js";
import type { TurnInputClaimCompletion } from "./inputs.js";
import type { LeaseFence, SessionExecutionLease } from "./lease.js";
import type { ParkedTurn } from "./parked-turns.js";
import type { QueuedWorkClaimCompletion } from "./queue.js";
import type { MetadataLimits } from "./storage-quotas.js";

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

export const ZERO_USAGE: UsageTotals = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};

export interface SessionSnapshot {
  sessionId: SessionId;
  /** 0 before the first commit; every commit advances it by exactly one. */
  headRevision: number;
  turnIndex: number;
  /**
   * Committed transcript entries, opaque to the store (JSON written by the runtime): the whole
   * transcript, or for a load since a mark only the entries from index `messagesFrom` on.
   */
  messages: string[];
  /** Transcript index of `messages[0]`: 0 for a whole transcript. */
  messagesFrom: number;
  /**
   * Names this incarnation of the transcript. Commits only ever append to a transcript of one
   * epoch; a session deleted and created again gets a new one. "" for a session stored before
   * epochs existed (never matched by a mark, so it always loads whole).
   */
  transcriptEpoch: string;
  usage: UsageTotals;
  /** Committed cost in micros at the configured prices (ADR 0016); absent while it is 0. */
  costMicros?: number;
  metadata: Record<string, string>;
}

/** What a reader already holds of a transcript: load only what came after it. */
export interface TranscriptMark {
  epoch: string;
  messageCount: number;
}

/** Where a load since `mark` starts: the mark's count when it names this transcript, else 0. */
export function markedCount(
  mark: TranscriptMark | undefined,
  epoch: string,
  stored: number,
): number {
  if (!mark || epoch === "" || mark.epoch !== epoch || mark.messageCount > stored) return 0;
  return mark.messageCount;
}

/** Identifies a turn commit so a retry after an unknown outcome is answered, not applied twice. */
export interface CommitStamp {
  operationId: string;
  contentHash: string;
}

import type { OutboxClaimReport, WebhookEvent } from "./webhooks.js";

export interface RuntimeCommit {
  sessionId: SessionId;
  /** The head the writer read; the commit applies only if it is still the head. */
  expectedHeadRevision: number;
  appendMessages: string[];
  usage?: UsageTotals;
  /** Cost in micros added to the session's committed cost (ADR 0016). */
  costMicros?: number;
  /** True for a turn commit: the session's turn index advances by one. */
  advanceTurn?: boolean;
  /** Keys set to "" are removed. */
  metadataPatch?: Record<string, string>;
  /**
   * The tenant's metadata limits (ADR 0029), checked with the patch in the commit's step: past
   * either, the commit is refused (quota_exhausted) and changes nothing. Absent: unchecked.
   */
  metadataLimits?: MetadataLimits;
  stamp?: CommitStamp;
  /** Advisory: released when the commit applies. */
  releaseLease?: LeaseFence;
  completeQueueClaims?: QueuedWorkClaimCompletion[];
  completeInputClaims?: TurnInputClaimCompletion[];
  /** The commit ends this parked turn: its record must exist and is removed in the same step. */
  parkedTurnId?: string;
  /**
   * A turn's id: its steered inputs still pending (it did not admit them) become next-turn
   * input, marked deferred, in the commit's step, as deferActiveInputs would before it.
   */
  deferTurnInputs?: string;
  /** Written to the session's webhook outbox in the commit's step (ADR 0021). */
  webhookEvents?: readonly WebhookEvent[];
  /**
   * With webhookEvents, on a store that folds the outbox (RuntimeStore.foldsOutbox): the hint's
   * expect and, for this replica's deliverer, the claim of the due rows, in the commit's step
   * (ADR 0021 "Folded into the commit"). Ignored by a store that does not fold.
   */
  outboxFold?: CommitOutboxFold;
  /**
   * A turn's announcement, in the commit's step (ADR 0011): its turn_completed appended to the
   * session's event log, then the lease released unless something waits for a holder. A store
   * without the session's log at hand ignores it and says so by leaving `announced` out.
   */
  announce?: CommitAnnouncement;
  /**
   * The tenant's quota slot release and pending charges, applied in the commit's step (ADR
   * 0038). Only on a store whose `chargesInCommit` said yes for the runtime's quota and spend
   * stores; a commit that does not apply (refused, replayed) applies none of them.
   */
  tenantCharges?: TenantCommitCharges;
}

/** The outbox work a commit does in its step (ADR 0021 "Folded into the commit"). */
export interface CommitOutboxFold {
  /** The expect (WebhookOutboxStore.expectOutbox): the writer's now and the due time. */
  nowMs: number;
  dueAtMs: number;
  /**
   * This replica's deliverer takes the outbox's due, unleased rows (those just written among
   * them) under its token for `leaseMs`, up to `max`, as claimOutbox would; the tenant's
   * endpoints version is read in the same step, so its cache is used only when unchanged.
   */
  claim?: { claimToken: string; leaseMs: number; max: number };
}

/** What a commit's fold claimed (CommitOutboxFold.claim); absent on a replay. */
export interface FoldedOutboxClaim {
  report: OutboxClaimReport;
  /** The tenant's endpoints version (WebhookEndpointsSince.version), read with the claim. */
  endpointsVersion: number;
}

export interface CommitAnnouncement {
  /** The holder: the commit is refused (lease expired) unless this fence holds the lease. */
  fence: LeaseFence;
  /** The turn that ends: its open client tool calls are closed in the commit's step. */
  turnId: string;
  /**
   * The event as the log keeps it (its JSON; the log's readers decode it): a turn_completed
   * names the head this commit makes (expected + 1).
   */
  eventJson: string;
  /**
   * The turn's held events (their JSON, as eventJson), appended in order just before eventJson
   * in the same step under the same fence (ADR 0040): consecutive sequence numbers ending one
   * before the announcement's. A commit refused or replayed appends none of them.
   */
  heldEventsJson?: readonly string[];
  /** Release the lease after the append unless something waits for a holder. */
  releaseIfIdle: boolean;
}

export interface CommitReceipt {
  sessionId: SessionId;
  headRevision: number;
  /** True when the stamp matched an earlier commit and this call changed nothing. */
  replayed: boolean;
  /** The announcement's log sequence number and what became of the lease (not on a replay). */
  announced?: CommitAnnounced;
  /** The rows the commit's fold claimed for this replica's deliverer (not on a replay). */
  outbox?: FoldedOutboxClaim;
}

export interface CommitAnnounced {
  /** The turn_completed's sequence number in the session's log. */
  seq: number;
  /** The lease was released in the step (nothing waited for a holder). */
  released: boolean;
  /**
   * The turn's signals ended in the step (ADR 0024): its cancel request and stored answers
   * deleted, its running-turn marker too while still its own, as the listener's stop would do;
   * the listener then only stops hearing. Absent where the signals live apart (memory).
   */
  signalsCleared?: boolean;
}

export interface VacuumReport {
  removedBatches: number;
  removedInputs: number;
}

/**
 * What a session list shows of one session: its committed counters, usage and metadata (no
 * transcript), its live lease and its parked turn, read together so a page costs one store call.
 */
export interface SessionSummary {
  sessionId: SessionId;
  headRevision: number;
  turnIndex: number;
  usage: UsageTotals;
  /** As SessionSnapshot.costMicros. */
  costMicros?: number;
  metadata: Record<string, string>;
  lease: SessionExecutionLease | undefined;
  parkedTurn: ParkedTurn | undefined;
}

export interface SessionListPage {
  sessionIds: SessionId[];
  /** Empty when there are no more pages. */
  nextCursor: string;
}

/**
 * How often a commit that did not ask for a compare-and-set (a metadata or agent-pin update, a
 * turn's commit under its lease) retries the head races it loses. Each loss means another commit
 * landed, so this many attempts outlast that many concurrent updates of one session.
 */
export const HEAD_RACE_ATTEMPTS = 32;
