// The stream room: what a client sees of a session. Cursors, the replica-local bus, the writer
// that puts a turn's events on the bus and the shared log, the mapping from the engine's events
// to the session's, and the watch that merges log and bus. It imports no other room.
export {
  CURSOR_SCALE,
  MAX_WINDOW_CHARS,
  entryCursor,
  isValidCursor,
  partialCursor,
  predecessorSeq,
  splitCursor,
} from "./cursor.js";
export {
  createEventWriter,
  type EventWriter,
  type EventWriterOptions,
  type PendingEntry,
} from "./event-writer.js";
export { createSessionBus, type BusListener, type SessionBus } from "./session-bus.js";
export {
  createTurnEventMapper,
  type SessionEventSink,
  type TurnEventMapperContext,
} from "./turn-event-mapper.js";
export {
  WATCH_ENDED,
  watchSession,
  type LocalDriving,
  type WatchDeps,
  type WatchOptions,
} from "./session-watch.js";
export {
  createLatch,
  createLinkedAbortController,
  onAbort,
  waitUnlessAborted,
  type Dispose,
  type Latch,
  type Waited,
} from "./signals.js";
export { createAsyncQueue, prefetch, type AsyncQueue } from "./async-iterables.js";
