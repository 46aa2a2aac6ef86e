// The replica-local live bus (runtime/stream/session-bus.ts builds it): what the runtime's deps
// name, so the deps import no room of the runtime.
import type { CursoredEvent } from "../domain/session-events.js";

export type BusListener = (event: CursoredEvent) => void;

export interface SessionBus {
  publish(event: CursoredEvent): void;
  subscribe(sessionId: string, listener: BusListener): () => void;
}
