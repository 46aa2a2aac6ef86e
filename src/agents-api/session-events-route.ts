// GET /v1/agents/sessions/{id}/events (ADR 0037, "Events out"): the session's log, translated by
// the one pure translator, as SSE in the SDKs' events mode, on any replica. Live by default (from
// the log's end when the request came); `?after=<event_id>` or `Last-Event-ID` replays what
// followed that event, then goes live. Either way the translator first folds the log up to the
// starting point without sending, so the events after it are exactly those every other replica
// and every other resume produce.
import { sessionNotFound } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { CursoredEvent } from "../domain/session-events.js";
import { textDelta } from "../domain/turn-events.js";
import type { EventLog } from "../ports/event-log.js";
import { CURSOR_SCALE, type TetherRuntime } from "../runtime/index.js";

import { isAfter, parseEventId, type EventPlace } from "./event-ids.js";
import {
  initialTranslatorState,
  translateEntry,
  type DoorEvent,
  type TranslatorState,
} from "./event-translator.js";
import type { RouteTable } from "./route-table.js";
import { openSse } from "./sse-writer.js";

/** What the events route reads: the runtime's watch, the shared log, whether a session exists. */
export interface SessionEventSource {
  runtime: Pick<TetherRuntime, "watch">;
  log: Pick<EventLog, "read" | "lastSeq" | "tail">;
  sessionExists(sessionId: SessionId): Promise<boolean>;
  /** Heartbeat interval (tests shorten it); default 15 s. */
  heartbeatMs?: number;
  /**
   * The concurrent_streams quota (ADR 0028), shared with gRPC's streams: counts a tenant's
   * stream in, throwing quota_exhausted (a 429) past its limit; returns its leave.
   */
  streams?: { enter(tenant: string): () => void };
}

const FOLD_BATCH = 256;

export function addSessionEventRoutes(routes: RouteTable, source: SessionEventSource): void {
  routes.add("GET", "/v1/agents/sessions/:session_id/events", async (call) => {
    const clientId = call.params.session_id ?? "";
    const { sessionId, publicSessionId } = call.scope.session(clientId, "session_id");
    const resume = resumePlaceOf(call.query.after, headerOf(call.headers["last-event-id"]));
    if (!(await source.sessionExists(sessionId))) throw sessionNotFound(clientId);
    // Counted from here until the stream ends, like a WatchSession; past the limit, a 429 before
    // any log read or event (the SDKs retry it after retry-after-ms).
    const leave = source.streams?.enter(call.scope.tenant);
    let start: StartingPoint;
    try {
      start = await startingPoint(source.log, sessionId, publicSessionId, resume);
    } catch (error) {
      leave?.();
      throw error;
    }
    return {
      status: 200,
      body: undefined,
      stream: (res, headers) =>
        streamEvents(source, { sessionId, publicSessionId, ...start }, res, headers).finally(leave),
    };
  });
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function resumePlaceOf(after: string | undefined, lastEventId: string | undefined) {
  if (after !== undefined && after !== "") return parseEventId(after, "after");
  if (lastEventId !== undefined && lastEventId !== "") {
    return parseEventId(lastEventId, "Last-Event-ID");
  }
  return undefined;
}

interface StartingPoint {
  /** The translator's state once it folded everything up to where the watch starts. */
  state: TranslatorState;
  /** The watch starts after this cursor. */
  watchAfter: number;
  /** Events at or before this place were sent before (or precede the subscription). */
  sentThrough: EventPlace;
  /** Events to send before the watch's (the rest of a live text piece's events). */
  pending: DoorEvent[];
}

/**
 * Where the stream starts and the state the translator has there. Live: after the log's last
 * entry now. After an event: the watch starts just before that event's entry (its later events
 * are re-made and the sent ones skipped); after a live text piece (a partial cursor, ADR 0005)
 * the watch starts at that very cursor and the fold takes the window's text up to it.
 */
async function startingPoint(
  log: SessionEventSource["log"],
  sessionId: SessionId,
  publicSessionId: string,
  resume: EventPlace | undefined,
): Promise<StartingPoint> {
  const initial = initialTranslatorState(publicSessionId);
  if (!resume) {
    const head = (await log.lastSeq(sessionId)) * CURSOR_SCALE;
    const state = await foldRecent(log, sessionId, initial, head);
    return { state, watchAfter: head, sentThrough: { cursor: head, index: Infinity }, pending: [] };
  }
  const offset = resume.cursor % CURSOR_SCALE;
  if (offset === 0) {
    const before = Math.max(0, resume.cursor - CURSOR_SCALE);
    const state = await foldLog(log, sessionId, initial, before);
    return { state, watchAfter: before, sentThrough: resume, pending: [] };
  }
  const landed = resume.cursor - offset;
  const folded = await foldLog(log, sessionId, initial, landed);
  const piece = await pieceBefore(log, sessionId, folded, landed, resume.cursor);
  const step = translateEntry(folded, piece);
  // The rebuilt piece holds the window's text up to the cursor, which may span several live
  // pieces, so its events stand for the client's piece only when the client names one of the
  // later events of a piece that opened the message (`.1`: item and part added, delta not yet).
  // A bare id says the client has every event of its piece.
  const pending = resume.index > 0 ? step.events.filter((_, i) => i > resume.index) : [];
  return { state: step.state, watchAfter: resume.cursor, sentThrough: resume, pending };
}

/** Folds the retained log through the entry at `throughCursor`, sending nothing. */
async function foldLog(
  log: SessionEventSource["log"],
  sessionId: SessionId,
  initial: TranslatorState,
  throughCursor: number,
): Promise<TranslatorState> {
  const throughSeq = throughCursor / CURSOR_SCALE;
  let state = initial;
  let afterSeq = 0;
  while (afterSeq < throughSeq) {
    const read = await log.read(sessionId, afterSeq, Math.min(FOLD_BATCH, throughSeq - afterSeq));
    if (read.entries.length === 0) break;
    for (const entry of read.entries) {
      if (entry.seq > throughSeq) break;
      state = fold(state, { cursor: entry.seq * CURSOR_SCALE, sessionId, ...entry });
    }
    afterSeq = read.entries.at(-1)?.seq ?? throughSeq;
  }
  return state;
}

/**
 * `foldLog` for the live start, cheaper: a turn's start sets everything the translator keeps
 * (status, required actions, the turn), so folding from the last `turn_started` gives the very
 * state a fold of the whole log gives. It is looked for in the log's last entries; without one
 * there, the whole log is folded.
 */
async function foldRecent(
  log: SessionEventSource["log"],
  sessionId: SessionId,
  initial: TranslatorState,
  throughCursor: number,
): Promise<TranslatorState> {
  const throughSeq = throughCursor / CURSOR_SCALE;
  const recent = (await log.tail(sessionId, FOLD_BATCH)).filter((e) => e.seq <= throughSeq);
  const start = recent.findLastIndex((e) => e.event.type === "turn_started");
  const whole = recent.length > 0 && recent[0]?.seq === 1;
  if (start < 0 && !whole) return foldLog(log, sessionId, initial, throughCursor);
  let state = initial;
  for (const entry of recent.slice(Math.max(0, start))) {
    state = fold(state, { cursor: entry.seq * CURSOR_SCALE, sessionId, ...entry });
  }
  return state;
}

/**
 * The live text piece that ended at `partial` (ADR 0005's partial cursor), rebuilt from the
 * window that holds it: the window's first characters up to the cursor. When the window has not
 * landed yet the piece is empty: the message it belongs to is open either way.
 */
async function pieceBefore(
  log: SessionEventSource["log"],
  sessionId: SessionId,
  state: TranslatorState,
  landed: number,
  partial: number,
): Promise<CursoredEvent> {
  const window = (await log.read(sessionId, landed / CURSOR_SCALE, 1)).entries[0];
  const seen = window?.event.type === "text_delta" ? window.event.text : "";
  const text = seen.slice(0, partial - landed);
  const turnId = window?.turnId ?? state.turn?.id ?? "";
  return { cursor: partial, sessionId, turnId, event: textDelta(text) };
}

function fold(state: TranslatorState, entry: CursoredEvent): TranslatorState {
  return translateEntry(state, entry).state;
}

export interface StreamPlan extends StartingPoint {
  sessionId: SessionId;
  publicSessionId: string;
  /**
   * Ends the stream when it answers true (a streaming create's end, session-create-stream.ts):
   * asked before the first entry and after each entry that leaves the session idle, with the
   * cursor the stream has reached. Without it the stream stays open until the client leaves.
   */
  settled?: (cursor: number, closed: AbortSignal) => Promise<boolean>;
}

/** The stream of a session from its log's first entry, after `leading` events of the route's. */
export function fromLogStart(publicSessionId: string, leading: DoorEvent[]): StartingPoint {
  return {
    state: initialTranslatorState(publicSessionId),
    watchAfter: 0,
    sentThrough: { cursor: 0, index: Infinity },
    pending: leading,
  };
}

export async function streamEvents(
  source: Pick<SessionEventSource, "runtime" | "heartbeatMs">,
  plan: StreamPlan,
  res: Parameters<typeof openSse>[0],
  headers: Record<string, string>,
): Promise<void> {
  const sse = openSse(res, headers, source.heartbeatMs);
  let state = plan.state;
  const settled = async (cursor: number) =>
    plan.settled !== undefined &&
    state.status === "idle" &&
    (await plan.settled(cursor, sse.closed));
  try {
    await sse.events(plan.pending);
    if (await settled(plan.watchAfter)) return;
    const events = source.runtime.watch(
      plan.sessionId,
      plan.publicSessionId,
      plan.watchAfter,
      false,
      sse.closed,
    );
    for await (const entry of events) {
      const step = translateEntry(state, entry);
      state = step.state;
      await sse.events(
        step.events.filter((_, index) =>
          isAfter({ cursor: entry.cursor, index }, plan.sentThrough),
        ),
      );
      if (sse.closed.aborted || (await settled(entry.cursor))) break;
    }
  } finally {
    // The client left (the watch ended with it), the replica stops, or a streaming create's
    // session is idle again: the stream ends; a client resumes after the last event it has, here
    // or elsewhere.
    sse.end();
  }
}

/** The source the composition root wires: the runtime's watch, the log, the store's sessions. */
export function createSessionEventSource(parts: {
  runtime: Pick<TetherRuntime, "watch">;
  log: Pick<EventLog, "read" | "lastSeq" | "tail">;
  store: { loadSession(sessionId: SessionId): Promise<unknown> };
}): SessionEventSource {
  return {
    runtime: parts.runtime,
    log: parts.log,
    sessionExists: async (sessionId) => (await parts.store.loadSession(sessionId)) !== undefined,
  };
}
