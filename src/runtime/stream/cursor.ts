// Stream cursors. The shared log coalesces text deltas into windows, while the driving replica
// streams every delta at once; a cursor therefore names a log entry *or* a character offset into
// the text window that will become the next entry:
//   entry n                        -> n * SCALE
//   delta inside window n, k chars -> (n - 1) * SCALE + k     (0 < k < SCALE)
// Resuming after a partial cursor replays the rest of that window and nothing twice.

export const CURSOR_SCALE = 2 ** 20;
/** Longest text window: offsets must stay below CURSOR_SCALE. */
export const MAX_WINDOW_CHARS = CURSOR_SCALE - 1;

export function entryCursor(seq: number): number {
  return seq * CURSOR_SCALE;
}

export function partialCursor(windowSeq: number, offset: number): number {
  return (windowSeq - 1) * CURSOR_SCALE + offset;
}

/** The last fully delivered entry and, when the cursor is partial, the offset into the next. */
export function splitCursor(cursor: number): { seq: number; offset: number } {
  return { seq: Math.floor(cursor / CURSOR_SCALE), offset: cursor % CURSOR_SCALE };
}

/** The entry that must have been delivered before an event at `cursor` may be. */
export function predecessorSeq(cursor: number): number {
  const { seq, offset } = splitCursor(cursor);
  return offset === 0 ? seq - 1 : seq;
}

export function isValidCursor(cursor: number): boolean {
  return Number.isSafeInteger(cursor) && cursor >= 0;
}
