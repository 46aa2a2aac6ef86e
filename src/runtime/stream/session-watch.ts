// Reads a session's events after a cursor: catch-up from the shared log, then live from both the
// log and this replica's bus, merged by cursor so nothing is skipped and nothing repeats. The
// decisions are the state machine of watch-machine.ts; this file performs its actions.
import type { SessionId } from "../../domain/ids.js";
import type { CursoredEvent } from "../../domain/session-events.js";
import type { EventLog } from "../../ports/event-log.js";
import type { RuntimeStore } from "../../ports/runtime-store.js";
import { createAsyncQueue, type AsyncQueue } from "./async-iterables.js";
import type { SessionBus } from "./session-bus.js";
import {
  createLinkedAbortController,
  onAbort,
  waitUnlessAborted,
  type Dispose,
} from "./signals.js";
import {
  initialWatchState,
  READ_BATCH,
  transition,
  type WatchAction,
  type WatchInput,
} from "./watch-machine.js";

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
   * The replica is closing: deliver what was already received and what the log holds now, then
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
  /**
   * While this replica holds the session's lease (and has not seen it lost): a signal that
   * aborts when that hold ends. Undefined when the session is not held here.
   */
  holdOf(sessionId: SessionId): AbortSignal | undefined;
}

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
  const inbox = createAsyncQueue<WatchInput>();
  // Subscribe before reading the log, so an event published meanwhile is queued, not lost.
  const unsubscribe = deps.bus.subscribe(sessionId, (event) => inbox.push({ kind: "bus", event }));
  // Ends the pending blocking wait on the log (it holds a Redis connection) when the watch ends.
  const logWaits = createLinkedAbortController(signal);
  // The watch's waits end on the caller's abort or the replica's stop: heard once per watch,
  // not once per wait (a listener added and removed per delivered event cost a turn's stream
  // a measurable share of its time).
  const unhear = [onAbort(signal, inbox.wake), options.stop && onAbort(options.stop, inbox.wake)];
  const effects = createWatchEffects(deps, options, inbox, logWaits.signal);
  let state = initialWatchState({
    publicSessionId: options.publicSessionId,
    afterCursor: options.afterCursor,
    driveOffered: options.driveOffered !== undefined,
  });
  try {
    let input = await effects.start();
    while (input !== undefined && !signal.aborted) {
      const step = transition(state, input);
      state = step.state;
      input = undefined;
      for (const action of step.actions) {
        if (signal.aborted) return;
        if (action.kind === "deliver") yield action.event;
        else if (action.kind === "report_gap") yield await effects.gap(action);
        else if (action.kind === "end") return;
        else input = await effects.perform(action);
      }
      input ??= inbox.take() ?? effects.idle();
    }
  } finally {
    effects.dispose();
    for (const dispose of unhear) dispose?.();
    unsubscribe();
    logWaits.abort(WATCH_ENDED);
  }
}

type Effect = Exclude<WatchAction, { kind: "deliver" | "report_gap" | "end" }>;

/** The watch's dealings with the log, the store and the driver; each returns the next input. */
function createWatchEffects(
  deps: WatchDeps,
  options: WatchOptions,
  inbox: AsyncQueue<WatchInput>,
  logWaitSignal: AbortSignal,
) {
  const { sessionId, signal, stop } = options;
  let leaseWatch: Dispose | undefined;
  const unwatchLease = (): void => {
    leaseWatch?.();
    leaseWatch = undefined;
  };
  const holdHere = (): AbortSignal | undefined => {
    const hold = options.drivenHere?.holdOf(sessionId);
    return hold?.aborted === false ? hold : undefined;
  };
  const readLog = async (afterSeq: number): Promise<WatchInput> => {
    const read = await deps.log.read(sessionId, afterSeq, READ_BATCH);
    return { kind: "log_read", entries: read.entries, firstRetainedSeq: read.firstRetainedSeq };
  };
  const armLogWait = (afterSeq: number): void => {
    const pollMs = options.pollMs ?? 1000;
    deps.log.waitForEntries(sessionId, afterSeq, pollMs, logWaitSignal, READ_BATCH).then(
      (entries) => inbox.push({ kind: "log_waited", entries }),
      // A failed wait hands over nothing: the read that follows reports the log's failure.
      () => inbox.push({ kind: "log_waited", entries: undefined }),
    );
  };

  return {
    /** The first input: where the watch starts, once the caller knows. */
    async start(): Promise<WatchInput | undefined> {
      if (!options.startsAt) return { kind: "started", cursor: options.afterCursor, readLog: true };
      const start = await waitUnlessAborted(options.startsAt, [signal]);
      return start.aborted ? undefined : { kind: "started", ...start.value };
    },
    idle: (): WatchInput => ({
      kind: "idle",
      drivenHere: holdHere() !== undefined,
      stopped: stop?.aborted === true,
    }),
    async gap(action: Extract<WatchAction, { kind: "report_gap" }>): Promise<CursoredEvent> {
      const snapshot = await deps.store.loadSession(sessionId);
      return {
        cursor: action.cursor,
        sessionId: options.publicSessionId,
        turnId: "",
        event: {
          type: "gap",
          requestedAfterCursor: action.requestedAfterCursor,
          retainedFromCursor: action.retainedFromCursor,
          snapshot,
        },
      };
    },
    async perform(action: Effect): Promise<WatchInput | undefined> {
      switch (action.kind) {
        case "read_log":
          return readLog(action.afterSeq);
        case "arm_log_wait":
          armLogWait(action.afterSeq);
          return undefined;
        case "await_drive_offer": {
          const offered = options.driveOffered?.catch(() => undefined) ?? Promise.resolve();
          const waited = await waitUnlessAborted(offered, [signal]);
          return waited.aborted ? undefined : { kind: "drive_offered" };
        }
        case "watch_lease_end": {
          const hold = holdHere();
          unwatchLease();
          if (hold) leaseWatch = onAbort(hold, () => inbox.push({ kind: "lease_ended" }));
          else inbox.push({ kind: "lease_ended" });
          return undefined;
        }
        case "unwatch_lease_end":
          unwatchLease();
          return undefined;
        case "wait":
          // An abort or a stop wakes the wait too (watchSession hears both): the loop or the idle
          // that follows sees it. One that came before this wait began ends it at once.
          if (signal.aborted || stop?.aborted === true) return undefined;
          await inbox.arrival();
          return undefined;
      }
    },
    dispose: unwatchLease,
  };
}
