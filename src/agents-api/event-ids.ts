// Event ids of the SSE stream (ADR 0037, "Events out"): `evt_<cursor>` for the first SDK event a
// log entry yields and `evt_<cursor>.<n>` for the n-th after it. The cursor is the session log's
// (ADR 0005), so an id names a place in the log that every replica knows, and a client that
// resumes after it gets what follows on any replica.
import { invalidArgument } from "../domain/errors.js";
import { isValidCursor } from "../runtime/index.js";

/** A place in the translated stream: the entry's cursor and the index of an event it yields. */
export interface EventPlace {
  cursor: number;
  index: number;
}

export function eventId(cursor: number, index: number): string {
  return index === 0 ? `evt_${cursor}` : `evt_${cursor}.${index}`;
}

const EVENT_ID = /^evt_(\d{1,16})(?:\.(\d{1,6}))?$/u;

/** The place an event id names; a malformed one is a 400 naming `field`. */
export function parseEventId(id: string, field: string): EventPlace {
  const match = EVENT_ID.exec(id);
  const cursor = Number(match?.[1]);
  if (!match || !isValidCursor(cursor)) {
    throw invalidArgument(field, "is not an event id of this stream (evt_<cursor>[.<n>])");
  }
  return { cursor, index: Number(match[2] ?? "0") };
}

/** Whether the event at `place` comes after `after` in the stream's order. */
export function isAfter(place: EventPlace, after: EventPlace): boolean {
  return (
    place.cursor > after.cursor || (place.cursor === after.cursor && place.index > after.index)
  );
}
