// The per-session event log: an append-only sequence with a bounded retained window, shared by
// every replica (in-process for the memory backend, a Redis Stream for Redis).
import type { SessionId } from "../domain/ids.js";
import type { LeaseFence } from "../domain/lease.js";
import type { SessionEvent } from "../domain/session-events.js";

export interface LogEntry {
  /** Per-session sequence number, starting at 1, strictly increasing. */
  seq: number;
  turnId: string;
  event: SessionEvent;
}

export interface LogRead {
  entries: LogEntry[];
  /** Lowest sequence number still retained (last + 1 when the log is empty). */
  firstRetainedSeq: number;
}

export interface EventLog {
  /**
   * Appends in order and returns the assigned sequence numbers. With a fence, the append happens
   * only while that lease is live (else SessionExecutionLeaseExpired), so a stale holder's
   * events never become visible.
   */
  append(
    sessionId: SessionId,
    entries: { turnId: string; event: SessionEvent }[],
    fence?: LeaseFence,
  ): Promise<number[]>;
  /** The highest sequence number written so far; 0 for none. */
  lastSeq(sessionId: SessionId): Promise<number>;
  /** Entries after `afterSeq`, at most `limit`. */
  read(sessionId: SessionId, afterSeq: number, limit: number): Promise<LogRead>;
  /** The last `limit` entries (fewer when the log holds fewer), oldest first: one read. */
  tail(sessionId: SessionId, limit: number): Promise<LogEntry[]>;
  /**
   * Resolves when an entry after `afterSeq` may exist (or after `timeoutMs`, or on abort), so a
   * reader can block instead of polling tightly. With the entries that arrived, in order from
   * the first after `afterSeq` (at most `limit`; none when the wait timed out), when the backend
   * hands them over; undefined when the reader should read the log itself.
   */
  waitForEntries(
    sessionId: SessionId,
    afterSeq: number,
    timeoutMs: number,
    signal: AbortSignal,
    limit?: number,
  ): Promise<LogEntry[] | undefined>;
  /**
   * Drops the session's entries (on session delete). The sequence counter survives, so a session
   * created again under the same id never reuses a cursor an old client may still hold.
   */
  remove(sessionId: SessionId): Promise<void>;
  close(): Promise<void>;
}
