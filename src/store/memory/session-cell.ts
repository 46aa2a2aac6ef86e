// The in-memory record of one session: committed state, lease, queue and inputs.
import { randomUUID } from "node:crypto";
import type { BatchId, InputId, SessionId } from "../../domain/ids.js";
import type { PendingTurnInput } from "../../domain/inputs.js";
import type { LeaseFence, SessionExecutionLease } from "../../domain/lease.js";
import { leaseExpired } from "../../domain/errors.js";
import type { ParkedTurn } from "../../domain/parked-turns.js";
import type { QueuedWorkBatch } from "../../domain/queue.js";
import type { CommitReceipt, UsageTotals } from "../../domain/session.js";
import { ZERO_USAGE } from "../../domain/session.js";
import type { TurnRecord } from "../../domain/turn-records.js";

export interface SourceKeyEntry<Id> {
  id: Id;
  contentHash: string;
}

/** A session's history (domain/history.ts, laid out as on Redis: see redis/lua/_history.lua). */
export interface SessionHistory {
  /** The first revision the session holds (1, or the revision a fork started from). */
  from: number;
  /** Per revision from `from`: its transcript's message count and turn index. */
  points: { count: number; turnIndex: number }[];
  /** Oldest first: each rewind's revision, the messages it kept and those it took off. */
  rewinds: { revision: number; kept: number; dropped: string[] }[];
  /** Each revision's metadata patch, in order (a fork's first: all of its metadata). */
  metadataLog: { revision: number; patch: Record<string, string> }[];
}

export interface SessionCell {
  sessionId: SessionId;
  lease: SessionExecutionLease | undefined;
  headRevision: number;
  /** See SessionSnapshot.transcriptEpoch: a cell is made once per incarnation of a session. */
  transcriptEpoch: string;
  turnIndex: number;
  messages: string[];
  usage: UsageTotals;
  /** Committed cost in micros (ADR 0016). */
  costMicros: number;
  metadata: Record<string, string>;
  stamps: Map<string, { contentHash: string; receipt: CommitReceipt }>;
  workSeq: number;
  batches: Map<BatchId, QueuedWorkBatch>;
  workSourceKeys: Map<string, SourceKeyEntry<BatchId>>;
  inputSeq: number;
  inputs: Map<InputId, PendingTurnInput>;
  inputSourceKeys: Map<string, SourceKeyEntry<InputId>>;
  /** The turn parked on outside answers, until its commit (parked-turn-ops.ts). */
  parked: ParkedTurn | undefined;
  history: SessionHistory;
  /** Turn records by turn id, oldest first (turn-record-ops.ts); they go with the session. */
  turnRecords: Map<string, TurnRecord>;
}

export function emptyCell(sessionId: SessionId): SessionCell {
  return {
    sessionId,
    lease: undefined,
    headRevision: 0,
    turnIndex: 0,
    messages: [],
    transcriptEpoch: randomUUID(),
    usage: { ...ZERO_USAGE },
    costMicros: 0,
    metadata: {},
    stamps: new Map(),
    workSeq: 0,
    batches: new Map(),
    workSourceKeys: new Map(),
    inputSeq: 0,
    inputs: new Map(),
    inputSourceKeys: new Map(),
    parked: undefined,
    history: { from: 1, points: [], rewinds: [], metadataLog: [] },
    turnRecords: new Map(),
  };
}

export function liveLease(cell: SessionCell, nowMs: number): SessionExecutionLease | undefined {
  return cell.lease && cell.lease.expiresAtMs > nowMs ? cell.lease : undefined;
}

/** The fence must name the live lease exactly; anything else is an expired authority. */
export function requireLiveFence(
  cell: SessionCell,
  fence: LeaseFence,
  nowMs: number,
): SessionExecutionLease {
  const lease = liveLease(cell, nowMs);
  if (
    !lease ||
    lease.leaseToken !== fence.leaseToken ||
    lease.fencingToken !== fence.fencingToken
  ) {
    throw leaseExpired(cell.sessionId, fence.fencingToken);
  }
  return lease;
}

/**
 * A session exists from its first acknowledged input (ADR 0003): an input or batch stored for a
 * session without a commit creates it in the same step, as CreateSession would (head 1, empty).
 */
export function createImplicitly(cell: SessionCell): void {
  if (cell.headRevision === 0) cell.headRevision = 1;
}

/** Deep copy for callers, so nothing they hold aliases the store's state. */
export function copy<T>(value: T): T {
  return structuredClone(value);
}
