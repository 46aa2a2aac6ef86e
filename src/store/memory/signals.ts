// In-process session signals: one replica, so a map of listeners is the whole transport.
import type { SessionId } from "../../domain/ids.js";
import type { SessionSignals, SteerNotice, TurnListener } from "../../ports/session-signals.js";

/** Steers kept for turns whose listener has not started yet (a turn id no listener names). */
const EARLY_STEERS_MAX = 256;

export function createMemorySignals(): SessionSignals {
  const active = new Map<SessionId, string>();
  const listeners = new Map<string, TurnListener>();
  const keyOf = (sessionId: SessionId, turnId: string): string => `${sessionId}\u0000${turnId}`;
  // Set once a store's submit tells these signals of its steers (steerNotice): in process,
  // nothing it tells is missed, unless a steer for a turn not yet listening is dropped from the
  // bounded keep below; the hearing token counts those drops (ADR 0041).
  let hearsSteers = false;
  let dropped = 0;
  const early = new Set<string>();
  const noteSteer: SteerNotice = (sessionId, turnId) => {
    const key = keyOf(sessionId, turnId);
    const listener = listeners.get(key);
    if (listener) {
      listener.onSteer?.();
      return;
    }
    early.add(key);
    const oldest = early.size > EARLY_STEERS_MAX ? early.values().next().value : undefined;
    if (oldest !== undefined) {
      early.delete(oldest);
      dropped += 1;
    }
  };

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
      if (early.delete(key)) listener.onSteer?.();
      return Promise.resolve(() => {
        if (listeners.get(key) === listener) listeners.delete(key);
        // A later turn of the session may have marked itself since.
        if (active.get(sessionId) === turnId) active.delete(sessionId);
        return Promise.resolve();
      });
    },
    steerHearing: () => (hearsSteers ? dropped : undefined),
    steerNotice: () => {
      hearsSteers = true;
      return noteSteer;
    },
    close: () => Promise.resolve(),
  };
}
