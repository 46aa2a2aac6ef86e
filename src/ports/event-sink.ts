// Where a turn's events go. A sink may be synchronous (a stream writer) or return a promise
// (an event log append); the engine awaits it before emitting the next event, so order holds.
import type { TurnEvent } from "../domain/turn-events.js";

export interface TurnEventSink {
  emit(event: TurnEvent): void | Promise<void>;
}
