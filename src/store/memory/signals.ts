// In-process session signals: one replica, so a map of listeners is the whole transport.
import type { SessionId } from "../../domain/ids.js";
import type { SessionSignals, TurnListener } from "../../ports/session-signals.js";

export function createMemorySignals(): SessionSignals {
  const active = new Map<SessionId, string>();
  const listeners = new Map<string, TurnListener>();
  const keyOf = (sessionId: SessionId, turnId: string): string => `${sessionId}\u0000${turnId}`;

  return {
    activeTurn: (sessionId) => Promise.resolve(active.get(sessionId)),
    requestCancel(sessionId, turnId) {
      const running = active.get(sessionId);
      if (running === undefined || (turnId !== undefined && turnId !== running)) {
        return Promise.resolve(false);
      }
      listeners.get(keyOf(sessionId, running))?.onCancel();
      return Promise.resolve(true);
    },
    submitToolResults(sessionId, turnId, results) {
      const listener = listeners.get(keyOf(sessionId, turnId));
      if (!listener) return Promise.resolve(false);
      for (const result of results) listener.onToolResult(result);
      return Promise.resolve(true);
    },
    submitDecisions(sessionId, turnId, decisions) {
      const listener = listeners.get(keyOf(sessionId, turnId));
      if (!listener) return Promise.resolve(false);
      for (const decision of decisions) listener.onDecision(decision);
      return Promise.resolve(true);
    },
    listen(sessionId, turnId, listener) {
      const key = keyOf(sessionId, turnId);
      active.set(sessionId, turnId);
      listeners.set(key, listener);
      return Promise.resolve(() => {
        if (listeners.get(key) === listener) listeners.delete(key);
        // A later turn of the session may have marked itself since.
        if (active.get(sessionId) === turnId) active.delete(sessionId);
        return Promise.resolve();
      });
    },
    close: () => Promise.resolve(),
  };
}
