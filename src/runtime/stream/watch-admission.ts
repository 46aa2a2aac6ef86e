// Whether an event may be delivered to a watching client now: it must follow exactly what the
// client has (ADR 0005). A live delta is taken only where the client stands; a landed window
// the client saw in part delivers only its rest.
import type { CursoredEvent, SessionEvent } from "../../domain/session-events.js";
import { textDelta } from "../../domain/turn-events.js";
import { CURSOR_SCALE, predecessorSeq, splitCursor } from "./cursor.js";

/** What admission reads and moves of the watch's state. */
export interface AdmissionState {
  cursor: number;
  lastLiveDelta: number;
  behind: boolean;
}

export interface Admitted<S extends AdmissionState> {
  state: S;
  /** The event as it may be delivered now; undefined when already seen or not yet in order. */
  event: CursoredEvent | undefined;
}

/**
 * The bus hands a watcher every piece in publish order, so when the client stands exactly at
 * the end of the last live piece and the next piece opens a new window, the window the client
 * is in has closed with nothing after it: it is fully delivered, and its entry need not be
 * waited for.
 */
function windowClosedAtClient(state: AdmissionState, cursor: number, event: SessionEvent): boolean {
  if (event.type !== "text_delta" || state.lastLiveDelta !== state.cursor) return false;
  const seen = splitCursor(state.cursor);
  return (
    seen.offset > 0 &&
    predecessorSeq(cursor) === seen.seq + 1 &&
    cursor % CURSOR_SCALE === event.text.length
  );
}

export function admitEvent<S extends AdmissionState>(
  state: S,
  candidate: CursoredEvent,
  live: boolean,
): Admitted<S> {
  const { cursor, event } = candidate;
  if (cursor <= state.cursor) return { state, event: undefined };
  if (live && windowClosedAtClient(state, cursor, event)) {
    return { state: { ...state, cursor }, event: candidate };
  }
  const seen = splitCursor(state.cursor);
  const behind = { state: { ...state, behind: true }, event: undefined };
  if (predecessorSeq(cursor) > seen.seq) return behind;
  // A live delta continues the window only from exactly where the client stands; after a
  // missed piece the log's coalesced window delivers the rest instead.
  if (event.type === "text_delta" && cursor % CURSOR_SCALE !== 0) {
    if ((cursor % CURSOR_SCALE) - event.text.length !== seen.offset) return behind;
  }
  const moved = { ...state, cursor };
  if (event.type === "text_delta" && cursor % CURSOR_SCALE === 0 && seen.offset > 0) {
    const rest = event.text.slice(seen.offset);
    if (rest === "") return { state: moved, event: undefined };
    return { state: moved, event: { ...candidate, event: textDelta(rest) } };
  }
  return { state: moved, event: candidate };
}
