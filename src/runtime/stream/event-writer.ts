// Writes a running turn's events: every event goes to this replica's bus at once; the shared log
// gets text deltas coalesced into short windows (so a token is not a Redis write) and every other
// event as its own entry, after the pending window; entries emitted close together share one
// log append (a group commit). A window also reaches the bus once it landed. With `hold`, events
// nothing waits on (HELD_TYPES) are numbered but written with the next write, within one window
// interval, or handed to the turn's commit (takePending, ADR 0040); like a window, they reach the
// bus once they landed, so no entry cursor is ever shown before the log holds it.
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
  /**
   * Hold the events nothing waits on (HELD_TYPES) once the log's end is known: they reach the
   * log with the next write, the window timer, or the commit (takePending), and the bus once
   * they landed. ADR 0040 says why each is safe to hold.
   */
  hold?: boolean;
  /** Called once, with the first failed write: the turn can stop instead of running on unseen. */
  onFailure?: (error: unknown) => void;
}

export interface EventWriter {
  /** Resolves with the event's cursor once it is in the log (text deltas: once windowed). */
  emit(event: SessionEvent): Promise<number>;
  /** Writes the pending text window, if any, and waits for every write so far. */
  flush(): Promise<void>;
  /**
   * Hands over what the writer holds instead of writing it, once every write so far settled:
   * the held events, then the open text window closed into an entry, numbered in order (the
   * turn's commit appends them, ADR 0040). None is on the bus yet: publish them once they
   * landed.
   */
  takePending(): Promise<PendingEntry[]>;
}

export interface PendingEntry {
  event: SessionEvent;
  /** The sequence number this writer gave it: the log's next ones, in order. */
  seq: number;
}

/**
 * Events a turn may hold for a later write (ADR 0040): nothing outside the turn acts on them
 * before it goes on, and nothing after them on the bus needs them first (a new text window
 * follows a non-held event). Not turn_started (a live text delta's cursor must come after a
 * start the log holds), tool calls, approvals or parks (a client must find them in the log
 * before the turn waits on it).
 */
const HELD_TYPES: ReadonlySet<SessionEvent["type"]> = new Set(["usage_reported", "tool_value"]);

interface QueuedAppend {
  event: SessionEvent;
  /** The sequence number this writer gave the event (the log's own answer wins). */
  expected: number | undefined;
  resolve(seq: number): void;
  reject(error: unknown): void;
}

const noop = (): void => undefined;

/** A held entry as the writer hands it over: numbered, not yet on the bus. */
const heldEntry = (q: QueuedAppend): PendingEntry => ({ event: q.event, seq: q.expected ?? 0 });

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
  // Held entries (numbered, on the bus once written): they join the next write, ahead of it.
  let held: QueuedAppend[] = [];

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

  /** What is held goes in the next write, ahead of anything asked for after it. */
  const releaseHeld = (): void => {
    if (held.length === 0) return;
    queued.push(...held);
    held = [];
    writing ??= Promise.resolve().then(writeQueued);
  };

  const append = (event: SessionEvent): Promise<number> => {
    releaseHeld();
    const expected = assigned === undefined ? undefined : ++assigned;
    const written = new Promise<number>((resolve, reject) => {
      queued.push({ event, expected, resolve, reject });
    });
    // A rejection is recorded in `failure` and surfaces on the next emit.
    written.catch(() => undefined);
    writing ??= Promise.resolve().then(writeQueued);
    return written;
  };

  /** Numbers the event as the log's next entry and keeps it for a later write. */
  const holdEntry = (event: SessionEvent, seq: number): void => {
    // Published as it lands, in the write's order (before what the write resolves after it).
    // Its failure, if its write fails, is recorded in `failure` like any other.
    const landed = (at: number): void =>
      bus.publish({ cursor: entryCursor(at), sessionId, turnId, event });
    held.push({ event, expected: seq, resolve: landed, reject: noop });
    // Written within one window interval at the latest, unless the commit takes it first.
    timer ??= setTimeout(() => void closeWindow(), windowMs);
  };

  /** Resolves once every append asked for so far is written (or failed). */
  const settled = async (): Promise<void> => {
    while (writing) await writing;
  };

  const closeWindow = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (windowText === "") {
      releaseHeld();
      return settled();
    }
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

  const flush = async (): Promise<void> => {
    await closeWindow();
    await settled();
    if (failure) throw failure;
  };

  /** The open window as a held entry, before the held event that closes it. */
  const holdWindow = (known: number): number => {
    if (windowText === "") return known;
    const seq = known + 1;
    holdEntry(textDelta(windowText), seq);
    windowText = "";
    return seq;
  };

  return {
    async emit(event) {
      if (failure) throw failure;
      if (event.type === "text_delta") {
        addText(event.text);
        return partialCursor((assigned ?? 0) + 1, windowText.length);
      }
      if (options.hold === true && assigned !== undefined && HELD_TYPES.has(event.type)) {
        // The window it closes is held before it, so the log and the bus keep their order.
        assigned = holdWindow(assigned) + 1;
        holdEntry(event, assigned);
        return entryCursor(assigned);
      }
      void closeWindow();
      const cursor = entryCursor(await append(event));
      bus.publish({ cursor, sessionId, turnId, event });
      return cursor;
    },
    flush,
    async takePending() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await settled();
      if (failure) throw failure;
      // Not numbered yet (nothing was held): only text can be pending, written the plain way.
      if (assigned === undefined) return flush().then(() => []);
      const taken = held.map(heldEntry);
      held = [];
      if (windowText !== "") {
        taken.push({ event: textDelta(windowText), seq: ++assigned });
        windowText = "";
      }
      return taken;
    },
  };
}
