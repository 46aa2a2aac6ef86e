// The watch of a session as a state machine: from what it has delivered and what just happened
// (an input), the next state and what to do (actions). Pure; session-watch.ts performs the
// actions and feeds back their results. ADR 0005 names the states and transitions.
import type { CursoredEvent } from "../../domain/session-events.js";
import type { LogEntry } from "../../ports/event-log.js";
import { entryCursor, splitCursor } from "./cursor.js";
import { admitEvent } from "./watch-admission.js";

/** Most entries one read of the log (or one wait on it) hands over. */
export const READ_BATCH = 256;

/** What the watch is doing. */
export type WatchPhase =
  /** Learning where to start, then reading the log from there (the only read that can gap). */
  | "starting"
  /** A read of the log is under way; `resume` is the live phase it returns to. */
  | "catching_up"
  /** The caller is offering to drive the session: how to wait is chosen once it has. */
  | "awaiting_offer"
  /** This replica drives the session: every append reaches the bus, so no log wait is armed. */
  | "live_bus_only"
  /** A blocking wait on the log is armed (or is armed at the next idle) besides the bus. */
  | "live_log_and_bus"
  | "ended";

export type LivePhase = "live_bus_only" | "live_log_and_bus";

export interface WatchState {
  phase: WatchPhase;
  resume: LivePhase;
  /** The client-visible session id events carry. */
  publicSessionId: string;
  /** Where the client stands: the cursor of the last event delivered. */
  cursor: number;
  /** The last log entry taken in. */
  logSeq: number;
  /** The cursor the client asked for, told back in a gap. */
  requested: number;
  /** The cursor of the last live text delta taken off the bus, delivered or not; -1 after other events. */
  lastLiveDelta: number;
  /** An event did not follow what the client has: what lies between is in the log. */
  behind: boolean;
  /** The log may hold more than a wait would hand over (a full batch, a wait that did not continue). */
  readDue: boolean;
  logWaitArmed: boolean;
  /** The caller has yet to offer to drive the session. */
  offerPending: boolean;
  /** The final read after a stop was made. */
  readAfterStop: boolean;
}

export type WatchInput =
  | { kind: "started"; cursor: number; readLog: boolean }
  | { kind: "log_read"; entries: LogEntry[]; firstRetainedSeq: number }
  | { kind: "log_waited"; entries: LogEntry[] | undefined }
  | { kind: "bus"; event: CursoredEvent }
  | { kind: "drive_offered" }
  | { kind: "lease_ended" }
  /** Nothing else is queued: choose how to go on. */
  | { kind: "idle"; drivenHere: boolean; stopped: boolean };

export type WatchAction =
  | { kind: "deliver"; event: CursoredEvent }
  | {
      kind: "report_gap";
      cursor: number;
      requestedAfterCursor: number;
      retainedFromCursor: number;
    }
  | { kind: "read_log"; afterSeq: number }
  | { kind: "arm_log_wait"; afterSeq: number }
  | { kind: "await_drive_offer" }
  | { kind: "watch_lease_end" }
  | { kind: "unwatch_lease_end" }
  | { kind: "wait" }
  | { kind: "end" };

export interface WatchStep {
  state: WatchState;
  actions: WatchAction[];
}

export function initialWatchState(options: {
  publicSessionId: string;
  afterCursor: number;
  driveOffered: boolean;
}): WatchState {
  return {
    phase: "starting",
    resume: "live_log_and_bus",
    publicSessionId: options.publicSessionId,
    cursor: options.afterCursor,
    logSeq: splitCursor(options.afterCursor).seq,
    requested: options.afterCursor,
    lastLiveDelta: -1,
    behind: false,
    readDue: false,
    logWaitArmed: false,
    offerPending: options.driveOffered,
    readAfterStop: false,
  };
}

export function transition(state: WatchState, input: WatchInput): WatchStep {
  if (state.phase === "ended") return { state, actions: [] };
  switch (input.kind) {
    case "started":
      return started(state, input.cursor, input.readLog);
    case "log_read":
      return logRead(state, input.entries, input.firstRetainedSeq);
    case "log_waited":
      return logWaited(state, input.entries);
    case "bus":
      return fromBus(state, input.event);
    case "drive_offered":
      return { state: { ...state, phase: "live_log_and_bus", offerPending: false }, actions: [] };
    case "lease_ended":
      // The hold this watch relied on ended: others may write the log now. Read it once.
      if (state.phase !== "live_bus_only") return { state, actions: [] };
      return catchUp(state, "live_log_and_bus", [{ kind: "unwatch_lease_end" }]);
    case "idle":
      return idle(state, input.drivenHere, input.stopped);
  }
}

function started(state: WatchState, cursor: number, readLog: boolean): WatchStep {
  const logSeq = splitCursor(cursor).seq;
  const next = { ...state, cursor, requested: cursor, logSeq };
  // Told that nothing before the log's end concerns it, the watch starts live without a read.
  if (!readLog) return { state: { ...next, phase: "live_log_and_bus" }, actions: [] };
  return { state: next, actions: [{ kind: "read_log", afterSeq: logSeq }] };
}

function logRead(state: WatchState, entries: LogEntry[], firstRetainedSeq: number): WatchStep {
  let next: WatchState = {
    ...state,
    phase: state.phase === "starting" ? "live_log_and_bus" : state.resume,
    // A full batch means more may follow at once.
    readDue: entries.length === READ_BATCH,
  };
  const actions: WatchAction[] = [];
  const { logSeq } = state;
  if (state.phase === "starting" && firstRetainedSeq > logSeq + 1 && firstRetainedSeq > 1) {
    // The log no longer holds what the client asked for: say so, then go on from what it holds.
    actions.push({
      kind: "report_gap",
      cursor: state.cursor,
      requestedAfterCursor: state.requested,
      retainedFromCursor: entryCursor(firstRetainedSeq),
    });
    next = {
      ...next,
      logSeq: firstRetainedSeq - 1,
      cursor: entryCursor(firstRetainedSeq - 1),
    };
  }
  const fresh = entries.filter((e) => e.seq > next.logSeq);
  return takeEntries(next, fresh, actions);
}

function logWaited(state: WatchState, entries: LogEntry[] | undefined): WatchStep {
  const next = { ...state, logWaitArmed: false };
  // A quiet poll or a full batch: read the log itself.
  if (entries === undefined || entries.length === READ_BATCH) {
    return { state: { ...next, readDue: true }, actions: [] };
  }
  // What a wait handed over continues the log only from where the watch stands; after a read
  // that went further, or if the log was trimmed past it, read it instead.
  const fresh = entries.filter((e) => e.seq > state.logSeq);
  if (fresh.length > 0 && fresh[0]?.seq !== state.logSeq + 1) {
    return { state: { ...next, readDue: true }, actions: [] };
  }
  return takeEntries(next, fresh, []);
}

function takeEntries(state: WatchState, entries: LogEntry[], actions: WatchAction[]): WatchStep {
  let next = state;
  for (const entry of entries) {
    const candidate: CursoredEvent = {
      cursor: entryCursor(entry.seq),
      sessionId: state.publicSessionId,
      turnId: entry.turnId,
      event: entry.event,
    };
    const admitted = admitEvent(next, candidate, false);
    next = { ...admitted.state, logSeq: Math.max(next.logSeq, entry.seq) };
    if (admitted.event) actions.push({ kind: "deliver", event: admitted.event });
  }
  return { state: next, actions };
}

function fromBus(state: WatchState, event: CursoredEvent): WatchStep {
  const admitted = admitEvent(state, event, true);
  const next = {
    ...admitted.state,
    lastLiveDelta: event.event.type === "text_delta" ? event.cursor : -1,
  };
  if (!admitted.event) return { state: next, actions: [] };
  const delivered = { ...admitted.event, sessionId: state.publicSessionId };
  return { state: next, actions: [{ kind: "deliver", event: delivered }] };
}

function catchUp(state: WatchState, resume: LivePhase, before: WatchAction[] = []): WatchStep {
  return {
    state: { ...state, phase: "catching_up", resume },
    actions: [...before, { kind: "read_log", afterSeq: state.logSeq }],
  };
}

/** Everything queued was taken in: read what is due, end after a stop, or choose how to wait. */
function idle(state: WatchState, drivenHere: boolean, stopped: boolean): WatchStep {
  // Only a live phase idles; anywhere else the watch waits for the input it is owed.
  if (state.phase !== "live_bus_only" && state.phase !== "live_log_and_bus") {
    return { state, actions: [{ kind: "wait" }] };
  }
  const live = state.phase;
  // Waiting on the log brings what the client lacks anyway; waiting on the bus alone, read it.
  const readNow = state.readDue || (state.behind && live === "live_bus_only");
  const settled = { ...state, behind: false, readDue: false };
  if (readNow) return catchUp(settled, live);
  if (stopped) {
    // One last read catches what reached the log before the stop, then the watch ends.
    if (state.readAfterStop)
      return { state: { ...settled, phase: "ended" }, actions: [{ kind: "end" }] };
    return catchUp({ ...settled, readAfterStop: true }, live);
  }
  if (state.offerPending) {
    return {
      state: { ...settled, phase: "awaiting_offer" },
      actions: [{ kind: "await_drive_offer" }],
    };
  }
  if (!state.logWaitArmed && drivenHere) {
    const actions: WatchAction[] = live === "live_bus_only" ? [] : [{ kind: "watch_lease_end" }];
    return {
      state: { ...settled, phase: "live_bus_only" },
      actions: [...actions, { kind: "wait" }],
    };
  }
  // Driven elsewhere now: what its holder wrote is only in the log.
  if (live === "live_bus_only") {
    return catchUp(settled, "live_log_and_bus", [{ kind: "unwatch_lease_end" }]);
  }
  if (state.logWaitArmed) return { state: settled, actions: [{ kind: "wait" }] };
  return {
    state: { ...settled, logWaitArmed: true },
    actions: [{ kind: "arm_log_wait", afterSeq: state.logSeq }, { kind: "wait" }],
  };
}
