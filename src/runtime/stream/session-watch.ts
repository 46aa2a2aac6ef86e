// Reads a session's events after a cursor: catch-up from the shared log, then live from both the
// log and this replica's bus, merged by cursor so nothing is skipped and nothing repeats.
import type { SessionId } from "../../domain/ids.js";
import type { CursoredEvent, SessionEvent } from "../../domain/session-events.js";
import { textDelta } from "../../domain/turn-events.js";
import type { EventLog, LogEntry } from "../../ports/event-log.js";
import type { RuntimeStore } from "../../ports/runtime-store.js";
import { CURSOR_SCALE, entryCursor, predecessorSeq, splitCursor } from "./cursor.js";
import type { SessionBus } from "./session-bus.js";

export interface WatchDeps {
  log: EventLog;
  bus: SessionBus;
  store: RuntimeStore;
}

export interface WatchOptions {
  sessionId: SessionId;
  /** Client-visible session id carried on events. */
  publicSessionId: string;
  afterCursor: number;
  signal: AbortSignal;
  /**
   * The replica is draining: deliver what was already received and what the log holds now, then
   * end instead of waiting for more (the caller tells the client to resume elsewhere).
   */
  stop?: AbortSignal;
  /** How long one blocking wait on the log lasts before it is repeated. */
  pollMs?: number;
  /**
   * Whether this replica drives the session now. While it does, every log append is its own
   * and reaches the bus after it lands, so the watch waits on the bus alone (no blocking log
   * read per append); when the session moves elsewhere, it reads the log once to catch up and
   * waits on the log again.
   */
  drivenHere?: LocalDriving;
  /**
   * Settles once the caller has offered to drive the session: the watch chooses how to wait
   * (bus alone, or a blocking log read) only after it, so a watch started just before its
   * replica claims the lease does not arm a log read it will never need.
   */
  driveOffered?: Promise<unknown>;
  /**
   * Where to start, when the caller learns it only after the watch subscribed (it then wins over
   * `afterCursor`). `readLog: false` says the caller read the log's end after this watch was
   * started (subscribed): everything later reaches the watch on the bus or the log after that
   * end, so no first read of the log is needed.
   */
  startsAt?: Promise<{ cursor: number; readLog: boolean }>;
}

export interface LocalDriving {
  /** This replica holds the session's lease now (and has not seen it lost). */
  isDriving(sessionId: SessionId): boolean;
  /** Calls `fn` once the replica no longer holds the lease; returns the unsubscribe. */
  onLeaseEnd(sessionId: SessionId, fn: () => void): () => void;
}

const READ_BATCH = 256;

/**
 * The reason a watch's own signals abort with. `abort()` without one builds a DOMException (a
 * stack capture) per watch, a measurable share of a short turn's cost; nothing reads this one.
 */
export const WATCH_ENDED = new Error("watch ended");

/** Yields events in cursor order until the signal aborts. */
export async function* watchSession(
  deps: WatchDeps,
  options: WatchOptions,
): AsyncGenerator<CursoredEvent, void, undefined> {
  const { sessionId, signal } = options;
  const pollMs = options.pollMs ?? 1000;
  let lastCursor = options.afterCursor;
  let logSeq = splitCursor(lastCursor).seq;

  // Subscribe before reading the log, so an event published meanwhile is buffered, not lost.
  const pending: CursoredEvent[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = deps.bus.subscribe(sessionId, (event) => {
    pending.push(event);
    wake?.();
  });
  // Ends the pending blocking wait on the log (it holds a Redis connection) when the watch ends.
  const logWaits = new AbortController();
  const onAbort = (): void => {
    logWaits.abort(WATCH_ENDED);
    wake?.();
  };
  signal.addEventListener("abort", onAbort);
  const onStop = (): void => wake?.();
  options.stop?.addEventListener("abort", onStop);

  const asClient = (cursor: number, turnId: string, event: SessionEvent): CursoredEvent => ({
    cursor,
    sessionId: options.publicSessionId,
    turnId,
    event,
  });

  // The cursor of the last live text delta taken off the bus, delivered or not. The bus hands
  // this watcher every piece in publish order, so when the client stands exactly at the end of
  // that piece and the next piece opens a new window, the window the client is in has closed
  // with nothing after it: it is fully delivered, and its log entry need not be waited for.
  let lastLiveDelta = -1;
  const windowClosedAtClient = (cursor: number, event: SessionEvent): boolean => {
    if (event.type !== "text_delta" || lastLiveDelta !== lastCursor) return false;
    const seen = splitCursor(lastCursor);
    return (
      seen.offset > 0 &&
      predecessorSeq(cursor) === seen.seq + 1 &&
      cursor % CURSOR_SCALE === event.text.length
    );
  };

  /** The event as it may be delivered now, or undefined when already seen or not yet in order. */
  const admit = (candidate: CursoredEvent, live = false): CursoredEvent | undefined => {
    const { cursor, event } = candidate;
    if (cursor <= lastCursor) return undefined;
    if (live && windowClosedAtClient(cursor, event)) {
      lastCursor = cursor;
      return candidate;
    }
    const seen = splitCursor(lastCursor);
    if (predecessorSeq(cursor) > seen.seq) {
      behind = true;
      return undefined;
    }
    if (event.type === "text_delta" && cursor % CURSOR_SCALE !== 0) {
      // A live delta continues the window only from exactly where the client stands; after a
      // missed piece the log's coalesced window delivers the rest instead.
      const start = (cursor % CURSOR_SCALE) - event.text.length;
      if (start !== seen.offset) {
        behind = true;
        return undefined;
      }
    }
    const partlySeen =
      event.type === "text_delta" && cursor % CURSOR_SCALE === 0 && seen.offset > 0;
    lastCursor = cursor;
    if (partlySeen) {
      const rest = event.text.slice(seen.offset);
      return rest === "" ? undefined : { ...candidate, event: textDelta(rest) };
    }
    return candidate;
  };

  // While the session is driven here: the end of that, which wakes the watch.
  let leaseEnd: (() => void) | undefined;
  // An event came that does not follow what the client has: what lies between is in the log
  // (published before this watch listened, or a text window the bus showed only in part).
  let behind = false;

  const fromLog = (entry: LogEntry): CursoredEvent =>
    asClient(entryCursor(entry.seq), entry.turnId, entry.event);

  try {
    let requested = options.afterCursor;
    let readFirst = true;
    if (options.startsAt) {
      const start = await options.startsAt;
      requested = lastCursor = start.cursor;
      logSeq = splitCursor(lastCursor).seq;
      readFirst = start.readLog;
    }
    const first = readFirst
      ? await deps.log.read(sessionId, logSeq, READ_BATCH)
      : { entries: [], firstRetainedSeq: logSeq + 1 };
    if (first.firstRetainedSeq > logSeq + 1 && first.firstRetainedSeq > 1) {
      // The log no longer holds what the client asked for: say so, with the committed state.
      const retainedFrom = first.firstRetainedSeq;
      const snapshot = await deps.store.loadSession(sessionId);
      logSeq = retainedFrom - 1;
      yield asClient(lastCursor, "", {
        type: "gap",
        requestedAfterCursor: requested,
        retainedFromCursor: entryCursor(retainedFrom),
        snapshot,
      });
      lastCursor = entryCursor(logSeq);
    }
    let batch = first.entries.filter((e) => e.seq > logSeq);
    // One blocking wait on the log stays armed across bus wake-ups: the log is read only when it
    // may hold something new (or a poll interval passed), never once per live delta.
    let logMayHaveMore = false;
    let logWait: Promise<void> | undefined;
    const arrived: LogEntry[] = [];
    let busOnly = false;
    let readAfterStop = false;
    let driveOffered = options.driveOffered?.catch(() => undefined);
    while (!signal.aborted) {
      if (arrived.length > 0) {
        // What a wait handed over continues the log only from where the watch stands; after
        // a read that went further, or if the log was trimmed past it, read it instead.
        const fresh = arrived.filter((e) => e.seq > logSeq);
        arrived.length = 0;
        if (fresh.length > 0 && (fresh[0]?.seq ?? 0) !== logSeq + 1) logMayHaveMore = true;
        else batch = [...batch, ...fresh];
      }
      for (const entry of batch) {
        logSeq = Math.max(logSeq, entry.seq);
        const event = admit(fromLog(entry));
        if (event) yield event;
      }
      batch = [];
      while (pending.length > 0 && !signal.aborted) {
        const next = pending.shift() as CursoredEvent;
        const event = admit(next, true);
        lastLiveDelta = next.event.type === "text_delta" ? next.cursor : -1;
        if (event) yield { ...event, sessionId: options.publicSessionId };
      }
      if (signal.aborted) break;
      if (behind) {
        behind = false;
        // Waiting on the log brings it anyway; waiting on the bus alone, read it now.
        if (busOnly) logMayHaveMore = true;
      }
      if (logMayHaveMore) {
        logMayHaveMore = false;
        batch = (await deps.log.read(sessionId, logSeq, READ_BATCH)).entries;
        // A full batch means more may follow at once; otherwise wait for news.
        if (batch.length === READ_BATCH) logMayHaveMore = true;
        continue;
      }
      if (options.stop?.aborted) {
        // One last read catches what reached the log before the stop, then the watch ends.
        if (readAfterStop) break;
        readAfterStop = true;
        logMayHaveMore = true;
        continue;
      }
      if (driveOffered) {
        await driveOffered;
        driveOffered = undefined;
        continue;
      }
      const local = options.drivenHere;
      if (logWait === undefined && local?.isDriving(sessionId) === true) {
        busOnly = true;
        leaseEnd ??= local.onLeaseEnd(sessionId, () => wake?.());
      } else if (busOnly) {
        leaseEnd?.();
        leaseEnd = undefined;
        // Driven elsewhere now: what its holder wrote is only in the log.
        busOnly = false;
        logMayHaveMore = true;
        continue;
      } else {
        logWait ??= deps.log
          .waitForEntries(sessionId, logSeq, pollMs, logWaits.signal, READ_BATCH)
          .then((entries) => {
            logWait = undefined;
            if (entries === undefined || entries.length === READ_BATCH) logMayHaveMore = true;
            else arrived.push(...entries);
            wake?.();
          });
      }
      if (
        pending.length > 0 ||
        arrived.length > 0 ||
        logMayHaveMore ||
        signal.aborted ||
        options.stop?.aborted
      ) {
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    leaseEnd?.();
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
    options.stop?.removeEventListener("abort", onStop);
    logWaits.abort(WATCH_ENDED);
  }
}
