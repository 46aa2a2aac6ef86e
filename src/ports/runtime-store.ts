// The store port: commits, leases, queued work, turn inputs and maintenance. Every backend passes
// the shared conformance suite (test/conformance); the in-memory store is the reference.
import { DEFAULT_INPUT_LIMITS, type InputLimits } from "../domain/conversation.js";
import type {
  ApprovalDecision,
  ClientToolResult,
  ToolAnswerReport,
  ToolCallState,
  ToolWait,
} from "../domain/tool-calls.js";
import type { AgentDraft, AgentListPage, AgentUpdate, AgentVersion } from "../domain/agents.js";
import type { ForkDraft, HistoryReceipt, RevisionRead, RewindDraft } from "../domain/history.js";
import type { BatchId, SessionId } from "../domain/ids.js";
import type {
  ParkReceipt,
  ParkTurnDraft,
  ParkedTurn,
  ResumeOutcome,
} from "../domain/parked-turns.js";
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
import type { QuotaStore } from "./quota-store.js";
import type { TenantBudgetStore } from "./budget-guard.js";
import type { TurnStartClaim, TurnStartReceipt } from "../domain/turn-start.js";
import type {
  TurnEndingCommit,
  TurnRecord,
  TurnRecordPage,
  TurnRecordQuery,
} from "../domain/turn-records.js";
import type {
  LeaseClaimOutcome,
  LeaseFence,
  LeaseRenewal,
  LeaseOwner,
  IdleReleaseOutcome,
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
  SessionListPage,
  SessionSummary,
  SessionSnapshot,
  TranscriptMark,
  VacuumReport,
} from "../domain/session.js";

export interface SessionCommitStore {
  /**
   * Applies the commit in one atomic step (head CAS, stamp, claim completions, lease release;
   * with `turnEnd`, the turn's record ends: TurnRecordStore).
   */
  commit(commit: TurnEndingCommit): Promise<CommitReceipt>;
  /**
   * Undefined when the session has no commit yet (or was deleted). With a mark whose epoch is
   * the transcript's, only the messages after the mark's count are returned (`messagesFrom`);
   * otherwise the whole transcript, as without a mark.
   */
  loadSession(sessionId: SessionId, since?: TranscriptMark): Promise<SessionSnapshot | undefined>;
  /**
   * Removes the transcript and its history, stamps, lease, queue, inputs and parked turn; the
   * lease generation counter and the turns' tool-call records survive (laws/delete.ts).
   */
  deleteSession(sessionId: SessionId): Promise<boolean>;
  /** Sessions with at least one commit, in id order; the index is a hint repaired on commit. */
  listSessions(options: {
    prefix?: string;
    cursor?: string;
    limit: number;
  }): Promise<SessionListPage>;
  /**
   * The summaries of a page of sessions in one batched read, in the order asked; a session with
   * no commit (or deleted since it was listed) is left out.
   */
  readSessionSummaries(sessionIds: readonly SessionId[]): Promise<SessionSummary[]>;
  /**
   * True when this store's commit step reaches the counters these ports keep (the same server
   * and namespace, and not a Cluster, where a tenant's keys sit in another slot than the
   * session's): a commit may then carry `tenantCharges` (ADR 0038). Absent or false: the
   * runtime charges and releases with the ports' own steps.
   */
  chargesInCommit?(ports: TenantLimitPorts): boolean;
}

/** The ports that keep a tenant's limits, as the runtime holds them. */
export interface TenantLimitPorts {
  quotas?: QuotaStore | undefined;
  spend?: TenantBudgetStore | undefined;
}

export interface SessionExecutionLeaseStore {
  tryClaimLease(sessionId: SessionId, owner: LeaseOwner, ttlMs: number): Promise<LeaseClaimOutcome>;
  /** Extends the exact fence's lease; a stale fence gets SessionExecutionLeaseExpired. */
  renewLease(fence: LeaseFence, ttlMs: number): Promise<SessionExecutionLease>;
  /**
   * renewLease for many fences in one call (a replica renews every lease it holds at once): one
   * outcome per fence, in order; a stale fence gets `expired` and leaves the others renewed.
   */
  renewLeases(fences: readonly LeaseFence[], ttlMs: number): Promise<LeaseRenewal[]>;
  /** Fenced and idempotent: a stale or old release never clears a newer lease. */
  releaseLease(fence: LeaseFence): Promise<LeaseReleaseOutcome>;
  /**
   * As releaseLease, in the same step as a look for anything that waits for a holder: an open
   * input to run next (or claimed, its claimant maybe gone), queued work, a parked turn. With
   * any, the lease stays (`pending`); so a holder that gets `released` leaves nothing behind.
   */
  releaseIfIdle(fence: LeaseFence): Promise<IdleReleaseOutcome>;
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
  /**
   * submitInput of a next-turn input and, in the same step when the session is vacant (no lease
   * hash: never held or released; no parked turn), tryClaimLease for `claim.owner`, claimInputs
   * at the idle point and loadSession since `claim.since` (ADR 0023). Absent (the wire): four calls.
   */
  startTurn?(draft: TurnInputDraft, claim: TurnStartClaim): Promise<TurnStartReceipt>;
  /**
   * True where the store keeps the ready index (ReadyIndex, ADR 0002) in its own steps: startTurn
   * marks the session ready, and a release that finds nothing waiting (releaseIfIdle, or a
   * commit's announcement with releaseIfIdle) clears its mark (ADR 0024: a standalone Redis).
   * The runtime then sends neither beside them. Absent: the runtime keeps the index itself.
   */
  readonly keepsReadyIndex?: boolean;
  /**
   * True where a commit's step also takes its outbox hint's expect and a local deliverer's claim
   * (RuntimeCommit.outboxFold; ADR 0021 "Folded into the commit": memory, a standalone or
   * Sentinel Redis), and every commit or park that writes outbox rows lists the outbox in the
   * hint index in its step ("The hint dropped in the settle"). Absent: the runtime expects
   * before the commit and nudges after it.
   */
  readonly foldsOutbox?: boolean;
  /**
   * True where a commit's announcement (RuntimeCommit.announce) and its held events land in the
   * session's log in its step (ADR 0040: memory with its log, any Redis). Else events go first.
   */
  announcesInCommit?(): boolean;
}

/**
 * What a turn waits on from outside, per call: a client's result or an approval decision (typed
 * waits, domain/tool-calls.ts).
 */
export interface ToolCallStore {
  /**
   * The lease holder records waits of its turn `turnId`. A wait already recorded keeps its
   * state (a re-run of the turn finds what was settled for the earlier run). States in order.
   */
  recordToolCalls(fence: LeaseFence, turnId: string, waits: ToolWait[]): Promise<ToolCallState[]>;
  /**
   * Any replica: for each answer, the first one for a pending result wait is stored; duplicates,
   * closed waits and calls the turn never recorded are ignored. A turn with no record at all
   * (never waited on anyone, or its records expired) is turn_not_running.
   */
  answerToolCalls(
    sessionId: SessionId,
    turnId: string,
    answers: ClientToolResult[],
  ): Promise<ToolAnswerReport>;
  /**
   * As answerToolCalls, for approval waits: the first decision for a pending approval of a call
   * is stored (it reads back `decided`); the call's result wait, if any, is left as it is.
   */
  decideApprovals(
    sessionId: SessionId,
    turnId: string,
    decisions: ApprovalDecision[],
  ): Promise<ToolAnswerReport>;
  /**
   * The lease holder closes the named waits, or every wait of the turn when none are named:
   * pending ones become closed, settled ones keep what settled them. States after, in order.
   */
  closeToolCalls(fence: LeaseFence, turnId: string, waits?: ToolWait[]): Promise<ToolCallState[]>;
  /** Every recorded wait of the turn ([] when it has none). */
  readToolCalls(sessionId: SessionId, turnId: string): Promise<ToolCallState[]>;
}

/** Turns parked on outside answers; see domain/parked-turns.ts. */
export interface ParkedTurnStore {
  /**
   * Under the live fence, in one step: checks that the turn's claims are held by the fence,
   * records its waits (pending unless recorded), stores its progress and releases the lease.
   * While a turn is parked, idle claims find nothing: new turns wait for it. Parking again
   * (a resumed turn that waits again) replaces the record; another turn's park is refused.
   */
  parkTurn(fence: LeaseFence, draft: ParkTurnDraft): Promise<ParkReceipt>;
  /**
   * Under the live fence: the parked turn `turnId` (undefined when the session has no parked
   * turn of that id; readParkedTurn finds it first). When it can go on (answered,
   * cancelled, expired) its claims move to the fence; while waiting nothing changes. The record
   * stays until the turn's commit, so a resume that dies is resumed again by the next holder.
   */
  resumeTurn(fence: LeaseFence, turnId: string): Promise<ResumeOutcome | undefined>;
  /** Any replica: asks the parked turn (of that id, when given) to end; false when none. */
  cancelParkedTurn(sessionId: SessionId, turnId?: string): Promise<boolean>;
  readParkedTurn(sessionId: SessionId): Promise<ParkedTurn | undefined>;
}

/** Agents as versioned data (domain/agents.ts); ids are tenant-scoped like session ids. */
export interface AgentStore {
  /** Version 1; agent_already_exists when the id is taken (a deleted agent's id stays taken). */
  createAgent(draft: AgentDraft): Promise<AgentVersion>;
  /** The next version, when `expectedVersion` is still the latest (agent_version_conflict). */
  updateAgent(update: AgentUpdate): Promise<AgentVersion>;
  /** A version, or the latest (undefined once deleted); old versions stay readable. */
  getAgent(agentId: string, version?: number): Promise<AgentVersion | undefined>;
  listAgents(options: { prefix?: string; cursor?: string; limit: number }): Promise<AgentListPage>;
  /** False when there was no such (live) agent. Its versions stay readable for pinned sessions. */
  deleteAgent(agentId: string): Promise<boolean>;
}

/**
 * A session's history (domain/history.ts): every revision stays readable, a rewind commits an
 * earlier revision's transcript, a fork starts a new session from any revision.
 */
export interface SessionHistoryStore {
  /** The session at `revision` (revision_out_of_range past the head; session_not_found). */
  readRevision(sessionId: SessionId, revision: number): Promise<RevisionRead>;
  /**
   * A new session whose transcript, metadata and turn index are the source's at the revision and
   * whose head is that revision; the source is untouched. session_already_exists when the
   * target has a commit, queued work or inputs.
   */
  forkSession(draft: ForkDraft): Promise<HistoryReceipt>;
  /**
   * One commit (head + 1) whose transcript is the one at `toRevision`, under a head CAS, with a
   * new transcript epoch; refused (turn_in_progress) while a lease is live or a turn is parked.
   */
  rewindSession(draft: RewindDraft): Promise<HistoryReceipt>;
}

/**
 * A session's turn records (domain/turn-records.ts, ADR 0037): written by the steps that already
 * start a turn (an idle claim of one input, a turn start, a resume: in_progress), park it
 * (waiting) and commit it (`turnEnd`: completed, failed or cancelled), so no turn pays a step for
 * them; the newest TURN_RECORDS_KEPT per session are kept, and they go with the session. A turn
 * that consumes only queued work gets its record from its park or commit. Optional: a backend
 * without them (the wire) leaves both out.
 */
export interface TurnRecordStore {
  /** A page of the session's records in creation order (`asc`) or newest first (`desc`). */
  readTurns?(sessionId: SessionId, query: TurnRecordQuery): Promise<TurnRecordPage>;
  readTurn?(sessionId: SessionId, turnId: string): Promise<TurnRecord | undefined>;
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
    ToolCallStore,
    ParkedTurnStore,
    AgentStore,
    SessionHistoryStore,
    TurnRecordStore,
    StoreMaintenance {}

/** True when a parameter carries a lease fence: the fence, a list of fences, or a field of one. */
type IsFence<T> = [NonNullable<T>] extends [never]
  ? false
  : [NonNullable<T>] extends [LeaseFence]
    ? true
    : [NonNullable<T>] extends [readonly LeaseFence[]]
      ? true
      : false;
type CarriesFence<P> =
  IsFence<P> extends true
    ? true
    : P extends readonly unknown[]
      ? false
      : P extends object
        ? true extends { [F in keyof P]-?: IsFence<P[F]> }[keyof P]
          ? true
          : false
        : false;

/**
 * Every store operation whose authority is a lease fence, derived from the port: an operation
 * added with a fence parameter joins it, and FENCED_STORE_OPERATIONS below must then name it.
 */
export type FencedStoreOperation = {
  [K in keyof RuntimeStore]-?: NonNullable<RuntimeStore[K]> extends (...args: infer A) => unknown
    ? true extends { [I in keyof A]: CarriesFence<A[I]> }[number]
      ? K
      : never
    : never;
}[keyof RuntimeStore];

/** The record's type keeps the list complete; the conformance suite tries stale fences on each. */
const FENCED: Record<FencedStoreOperation, true> = {
  commit: true,
  renewLease: true,
  renewLeases: true,
  releaseLease: true,
  releaseIfIdle: true,
  reclaimLease: true,
  claimReadyWork: true,
  claimWorkByIds: true,
  claimInputs: true,
  deferActiveInputs: true,
  recordToolCalls: true,
  closeToolCalls: true,
  parkTurn: true,
  resumeTurn: true,
};
export const FENCED_STORE_OPERATIONS = Object.keys(FENCED) as FencedStoreOperation[];

export interface StoreLimits {
  /** Largest payload or message accepted, in bytes (UTF-8). */
  maxPayloadBytes: number;
  maxBatchesPerClaim: number;
}

/** The server's default largest request or response, in bytes (TETHER_MAX_MESSAGE_BYTES). */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** The floor of a stored value: what the runtime writes of its own (a tool's output, a model's answer). */
const MIN_PAYLOAD_BYTES = 1024 * 1024;
/** JSON's own keys around the request's values: per input item, per client tool, the settings. */
const ENCODING_SLACK_BYTES = 64 * 1024;

/**
 * The store limits under which everything the API accepts can be stored, so the store never
 * refuses what the edge let in (and never names a field of its own). A request's values reach the
 * store as JSON: bytes as base64 (4/3 of them), text with its escapes (a control character becomes
 * the six bytes `\u0001`), so a stored value is at most six times the request of at most
 * `maxMessageBytes` that carried it, plus the encoding's keys; and never less than the largest
 * inline image the input limits promise, base64-encoded.
 */
export function storeLimitsFor(
  maxMessageBytes: number,
  input: InputLimits = DEFAULT_INPUT_LIMITS,
): StoreLimits {
  const image = Math.ceil(input.maxInlineImageBytes / 3) * 4;
  return {
    maxPayloadBytes: Math.max(MIN_PAYLOAD_BYTES, 6 * maxMessageBytes, image) + ENCODING_SLACK_BYTES,
    maxBatchesPerClaim: 256,
  };
}

export const DEFAULT_STORE_LIMITS: StoreLimits = storeLimitsFor(DEFAULT_MAX_MESSAGE_BYTES);
