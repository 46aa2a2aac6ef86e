// The replica-local live bus (runtime/stream/session-bus.ts builds it): what the runtime's deps
// name, so the deps import no room of the runtime.
import type { CursoredEvent } from "../domain/session-events.js";

export type BusListener = (event: CursoredEvent) => void;

/** Told that the session's cursors past `afterCursor` were published but never written. */
export type RetractionListener = (afterCursor: number) => void;

export interface SessionBus {
  publish(event: CursoredEvent): void;
  subscribe(sessionId: string, listener: BusListener, onRetract?: RetractionListener): () => void;
  /**
   * A turn's writer published events with the cursors they would have and then failed to write
   * them (a held entry's write, or the commit that carried it, failed: ADR 0040): every cursor
   * past `afterCursor` is void, and the turn's re-run will number its events from there again.
   * Absent on a bus that never hears of it (its watchers then keep their cursors).
   */
  retract?(sessionId: string, afterCursor: number): void;
}
