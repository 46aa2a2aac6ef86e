// In-process event log: per-session arrays with a bounded retained window and wake-ups for readers.
import { leaseExpired } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { SessionEvent } from "../../domain/session-events.js";
import type { EventLog, LogEntry, LogRead } from "../../ports/event-log.js";

interface SessionLog {
  entries: LogEntry[];
  lastSeq: number;
  waiters: Set<() => void>;
}

export interface MemoryEventLogOptions {
  /** Entries retained per session; older ones are dropped and readers get a gap. */
  maxEntries?: number;
  /**
   * The leases a fenced append is checked against: the memory store the runtime uses. Without
   * it, an append that names a fence is refused (nothing could vouch for the fence).
   */
  fences?: FenceAuthority;
}

/** Answers whether a fence names its session's live lease right now. */
export interface FenceAuthority {
  fenceIsLive(fence: LeaseFence): boolean;
}

/** The memory log as its store appends to it: unfenced, at once, inside the store's own step. */
export interface AnnouncementLog {
  appendNow(sessionId: SessionId, items: { turnId: string; event: SessionEvent }[]): number[];
  /** The log's last sequence number now (0 before its first entry). */
  lastSeqNow(sessionId: SessionId): number;
}

export type MemoryEventLog = EventLog & AnnouncementLog;

export function createMemoryEventLog(options: MemoryEventLogOptions = {}): MemoryEventLog {
  const maxEntries = options.maxEntries ?? 10_000;
  const logs = new Map<SessionId, SessionLog>();
  const logOf = (sessionId: SessionId): SessionLog => {
    let log = logs.get(sessionId);
    if (!log) {
      log = { entries: [], lastSeq: 0, waiters: new Set() };
      logs.set(sessionId, log);
    }
    return log;
  };

  const appendNow = (
    sessionId: SessionId,
    items: { turnId: string; event: SessionEvent }[],
  ): number[] => {
    const log = logOf(sessionId);
    const seqs = items.map((item) => {
      const seq = ++log.lastSeq;
      log.entries.push({ seq, turnId: item.turnId, event: structuredClone(item.event) });
      return seq;
    });
    if (log.entries.length > maxEntries) log.entries.splice(0, log.entries.length - maxEntries);
    const waiters = [...log.waiters];
    log.waiters.clear();
    for (const wake of waiters) wake();
    return seqs;
  };

  return {
    lastSeqNow: (sessionId) => logs.get(sessionId)?.lastSeq ?? 0,
    append(sessionId, items, fence) {
      // A stale holder's events never become visible (the Redis log checks in its script).
      if (fence !== undefined && options.fences?.fenceIsLive(fence) !== true) {
        return Promise.reject(leaseExpired(sessionId, fence.fencingToken));
      }
      return Promise.resolve(appendNow(sessionId, items));
    },

    appendNow,

    lastSeq: (sessionId) => Promise.resolve(logs.get(sessionId)?.lastSeq ?? 0),

    read(sessionId, afterSeq, limit): Promise<LogRead> {
      const log = logs.get(sessionId);
      if (!log) return Promise.resolve({ entries: [], firstRetainedSeq: 1 });
      const firstRetainedSeq = log.entries[0]?.seq ?? log.lastSeq + 1;
      // Retained entries are numbered without holes (appends count up, trimming drops the
      // oldest), so the first one after `afterSeq` sits at a known index: no scan.
      const start = Math.max(0, afterSeq + 1 - firstRetainedSeq);
      const entries = log.entries.slice(start, start + limit).map((e) => structuredClone(e));
      return Promise.resolve({ entries, firstRetainedSeq });
    },

    tail(sessionId, limit) {
      const entries = logs.get(sessionId)?.entries ?? [];
      return Promise.resolve(entries.slice(-limit).map((e) => structuredClone(e)));
    },

    // Reading the memory log costs nothing: the reader reads it itself (undefined).
    waitForEntries(sessionId, afterSeq, timeoutMs, signal) {
      const log = logOf(sessionId);
      if (log.lastSeq > afterSeq || signal.aborted) return Promise.resolve(undefined);
      return new Promise<undefined>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          log.waiters.delete(done);
          resolve(undefined);
        };
        const timer = setTimeout(done, timeoutMs);
        signal.addEventListener("abort", done, { once: true });
        log.waiters.add(done);
      });
    },

    remove(sessionId) {
      const log = logs.get(sessionId);
      // Entries go; the counter stays (see the port), as in the Redis log.
      if (log) log.entries = [];
      return Promise.resolve();
    },

    close: () => Promise.resolve(),
  };
}
