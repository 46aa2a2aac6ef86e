// In-process ready hints, each due at a time: a session marked ready is due at once, a parked
// one when it should next be looked at. Listing gives the due ones, oldest first.
import type { SessionId } from "../../domain/ids.js";
import { systemClock, type Clock } from "../../ports/clock.js";
import type { ReadyIndex } from "../../ports/ready-index.js";

export function createMemoryReadyIndex(clock: Clock = systemClock): ReadyIndex {
  const dueAt = new Map<SessionId, number>();
  return {
    markReady(sessionId) {
      const now = clock.nowMs();
      // The earlier time wins: a ready mark is never pushed later by another.
      const at = dueAt.get(sessionId);
      if (at === undefined || at > now) dueAt.set(sessionId, now);
      return Promise.resolve();
    },
    wakeAt(sessionId, atMs) {
      dueAt.set(sessionId, atMs);
      return Promise.resolve();
    },
    markIdle(sessionId) {
      dueAt.delete(sessionId);
      return Promise.resolve();
    },
    listReady(limit) {
      const now = clock.nowMs();
      const due = [...dueAt].filter(([, at]) => at <= now).sort((a, b) => a[1] - b[1]);
      return Promise.resolve(due.slice(0, limit).map(([id]) => id));
    },
    size: () => Promise.resolve(dueAt.size),
  };
}
