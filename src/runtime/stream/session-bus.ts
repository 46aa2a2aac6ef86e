// The replica-local live bus: the driving replica publishes every event here at once (each text
// delta too), so watchers on the same replica see tokens without waiting for the shared log.
import type { BusListener, RetractionListener, SessionBus } from "../../ports/session-bus.js";

export type { BusListener, SessionBus };

interface Subscriber {
  listener: BusListener;
  onRetract: RetractionListener | undefined;
}

export function createSessionBus(): SessionBus {
  const subscribers = new Map<string, Set<Subscriber>>();
  return {
    publish(event) {
      for (const s of subscribers.get(event.sessionId) ?? []) s.listener(event);
    },
    retract(sessionId, afterCursor) {
      for (const s of subscribers.get(sessionId) ?? []) s.onRetract?.(afterCursor);
    },
    subscribe(sessionId, listener, onRetract) {
      let set = subscribers.get(sessionId);
      if (!set) {
        set = new Set();
        subscribers.set(sessionId, set);
      }
      const subscriber = { listener, onRetract };
      set.add(subscriber);
      return () => {
        set.delete(subscriber);
        if (set.size === 0) subscribers.delete(sessionId);
      };
    },
  };
}
