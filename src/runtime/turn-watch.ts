// The watch behind one StreamTurn: opened before the turn's input is stored, told where to
// start and when the drive was offered, and narrowed to the turn that takes the input.
import type { SessionId } from "../domain/ids.js";
import type { CursoredEvent } from "../domain/session-events.js";
import {
  createLatch,
  createLinkedAbortController,
  prefetch,
  WATCH_ENDED,
  watchSession,
  type Latch,
  type LocalDriving,
  type WatchDeps,
} from "./stream/index.js";

export interface TurnWatch {
  /** The session's events from where the stream starts, pulled one ahead of the client. */
  events: AsyncIterableIterator<CursoredEvent>;
  /** Settled once this replica offered to drive the session. */
  offered: Latch<void>;
  /** Settled once the input is stored: where the stream starts, and whether to read the log. */
  startsAt: Latch<{ cursor: number; readLog: boolean }>;
  /** Ends the watch (also one that never started). */
  close(): void;
}

/**
 * The watch of a StreamTurn starts first, before the turn is driven and before the log's end
 * is read: it listens on the bus from here, so the turn's events reach it live, and it needs
 * no read of the log to start (what lands after the end read reaches it on the bus or the
 * log). It ends with the stream however the stream ends (`close`), also before its first event.
 */
export function openTurnWatch(
  deps: WatchDeps,
  drivenHere: LocalDriving,
  options: {
    sessionId: SessionId;
    publicSessionId: string;
    signal: AbortSignal;
    stop: AbortSignal;
  },
): TurnWatch {
  const end = createLinkedAbortController(options.signal);
  const offered = createLatch<void>();
  const startsAt = createLatch<{ cursor: number; readLog: boolean }>();
  const events = prefetch(
    watchSession(deps, {
      sessionId: options.sessionId,
      publicSessionId: options.publicSessionId,
      afterCursor: 0,
      startsAt: startsAt.promise,
      signal: end.signal,
      stop: options.stop,
      drivenHere,
      driveOffered: offered.promise,
    }),
    // A stream ends at its turn's turn_completed: no pull past one (ADR 0024).
    (item) => item.event.type === "turn_completed",
  );
  return {
    events,
    offered,
    startsAt,
    close() {
      end.abort(WATCH_ENDED);
      // A watch still waiting to learn where to start ends without reading anything.
      startsAt.settle({ cursor: 0, readLog: false });
      offered.settle();
      void events.return?.();
    },
  };
}

/** The events of the turn that takes `inputId`, through its turn_completed (and any gap). */
export async function* followTurn(
  events: AsyncIterable<CursoredEvent>,
  inputId: string,
): AsyncGenerator<CursoredEvent, void, undefined> {
  let ourTurn: string | undefined;
  for await (const item of events) {
    const { event } = item;
    if (!ourTurn) {
      const mine =
        (event.type === "turn_started" && event.inputIds.includes(inputId)) ||
        (event.type === "input_admitted" && event.inputIds.includes(inputId));
      if (!mine) continue;
      ourTurn = item.turnId;
    }
    if (item.turnId !== ourTurn && event.type !== "gap") continue;
    yield item;
    if (event.type === "turn_completed") return;
  }
}
