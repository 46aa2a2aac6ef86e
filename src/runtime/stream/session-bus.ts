// The replica-local live bus: the driving replica publishes every event here at once (each text
// delta too), so watchers on the same replica see tokens without waiting for the shared log.
import type { BusListener, SessionBus } from "../../ports/session-bus.js";

export type { BusListener, SessionBus };

export function createSessionBus(): SessionBus {
  const listeners = new Map<string, Set<BusListener>>();
  return {
    publish(event) {
      for (const listener of listeners.get(event.sessionId) ?? []) listener(event);
    },
    subscribe(sessionId, listener) {
      let set = listeners.get(sessionId);
      if (!set) {
        set = new Set();
        listeners.set(sessionId, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(sessionId);
      };
    },
  };
}
