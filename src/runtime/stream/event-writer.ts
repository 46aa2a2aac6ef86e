// Writes a running turn's events: every event goes to this replica's bus at once; the shared log
// gets text deltas coalesced into short windows (so a token is not a Redis write) and every other
// event as its own entry, after the pending window; entries emitted close together share one
// log append (a group commit). A window also reaches the bus once it landed.
import type { SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { SessionEvent } from "../../domain/session-events.js";
import { textDelta } from "../../domain/turn-events.js";
import type { EventLog } from "../../ports/event-log.js";
import { MAX_WINDOW_CHARS, entryCursor, partialCursor } from "./cursor.js";
import type { SessionBus } from "./session-bus.js";

export interface EventWriterOptions {
  log: EventLog;
  bus: SessionBus;
  sessionId: SessionId;
  turnId: string;
  /** The turn's lease: the log refuses appends once it is no longer live. */
  fence?: LeaseFence;
  /**
   * The log's last sequence number when the turn started; undefined to learn it from the first
   * append (which the turn awaits before any text: a live delta needs its window's number).
   */
  lastSeq?: number;
  windowMs?: number;
  windowChars?: number;
  /** Called once, with the first failed write: the turn can stop instead of running on unseen. */
  onFailure?: (error: unknown) => void;
}

export interface EventWriter {
  /** Resolves with the event's cursor once it is in the log (text deltas: once windowed). */
  emit(event: SessionEvent): Promise<number>;
  /** Writes the pending text window, if any, and waits for every write so far. */
  flush(): Promise<void>;
}

interface QueuedAppend {
  event: SessionEvent;
  /** The sequence number this writer gave the event (the log's own answer wins). */
  expected: number | undefined;
  resolve(seq: number): void;
  reject(error: unknown): void;
}

export function createEventWriter(options: EventWriterOptions): EventWriter {
  const { log, bus, sessionId, turnId } = options;
  const windowMs = options.windowMs ?? 50;
  const windowChars = Math.min(options.windowChars ?? 128, MAX_WINDOW_CHARS);
  // This turn holds the lease, so it is the log's only writer: it can number entries itself
  // and give live deltas the cursor of the window they will land in.
  let assigned: number | undefined = options.lastSeq;
  let windowText = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failure: unknown;
  // Appends go out as a group commit: what is emitted while a write is in flight (or in the same
  // tick as the first) goes in the next single log append, in order. A turn's text window and
  // the event that closed it, or usage and the next window, cost one store call instead of two.
  let queued: QueuedAppend[] = [];
  let writing: Promise<void> | undefined;

  const writeQueued = async (): Promise<void> => {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        const seqs = await log.append(
          sessionId,
          batch.map((q) => ({ turnId, event: q.event })),
          options.fence,
        );
        batch.forEach((q, i) => {
          const seq = seqs[i] ?? q.expected ?? 0;
          if (seq !== q.expected) assigned = Math.max(assigned ?? 0, seq);
          q.resolve(seq);
        });
      } catch (error) {
        if (failure === undefined) {
          failure = error;
          options.onFailure?.(error);
        }
        for (const q of batch) q.reject(error);
      }
    }
    writing = undefined;
  };

  const append = (event: SessionEvent): Promise<number> => {
    const expected = assigned === undefined ? undefined : ++assigned;
    const written = new Promise<number>((resolve, reject) => {
      queued.push({ event, expected, resolve, reject });
    });
    // A rejection is recorded in `failure` and surfaces on the next emit.
    written.catch(() => undefined);
    writing ??= Promise.resolve().then(writeQueued);
    return written;
  };

  /** Resolves once every append asked for so far is written (or failed). */
  const settled = async (): Promise<void> => {
    while (writing) await writing;
  };

  const closeWindow = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (windowText === "") return settled();
    const text = windowText;
    windowText = "";
    // Never rejects: a failed write is recorded in `failure` and surfaces on the next emit.
    // The landed window goes on the bus too, as the log holds it: a watcher that saw all its
    // pieces gets nothing new from it but knows the window closed, so what follows is in order
    // without a read of the log; one that missed pieces gets the rest.
    return append(textDelta(text)).then(
      (seq) =>
        bus.publish({
          cursor: entryCursor(seq),
          sessionId,
          turnId,
          event: textDelta(text),
        }),
      () => undefined,
    );
  };

  const addText = (text: string): void => {
    let rest = text;
    while (rest.length > 0) {
      const piece = rest.slice(0, MAX_WINDOW_CHARS - windowText.length);
      rest = rest.slice(piece.length);
      windowText += piece;
      // Before the log's end is known no live cursor exists: the landed window carries it.
      if (assigned !== undefined) {
        bus.publish({
          cursor: partialCursor(assigned + 1, windowText.length),
          sessionId,
          turnId,
          event: textDelta(piece),
        });
      }
      if (windowText.length >= windowChars) void closeWindow();
    }
    if (windowText !== "" && !timer) timer = setTimeout(() => void closeWindow(), windowMs);
  };

  return {
    async emit(event) {
      if (failure) throw failure;
      if (event.type === "text_delta") {
        addText(event.text);
        return partialCursor((assigned ?? 0) + 1, windowText.length);
      }
      void closeWindow();
      const cursor = entryCursor(await append(event));
      bus.publish({ cursor, sessionId, turnId, event });
      return cursor;
    },
    async flush() {
      await closeWindow();
      await settled();
      if (failure) throw failure;
    },
  };
}
