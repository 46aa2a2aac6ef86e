// In-process ready hints: insertion order is hint age.
import type { SessionId } from "../../domain/ids.js";
import type { ReadyIndex } from "../../ports/ready-index.js";

export function createMemoryReadyIndex(): ReadyIndex {
  const ready = new Set<SessionId>();
  return {
    markReady(sessionId) {
      ready.add(sessionId);
      return Promise.resolve();
    },
    markIdle(sessionId) {
      ready.delete(sessionId);
      return Promise.resolve();
    },
    listReady: (limit) => Promise.resolve([...ready].slice(0, limit)),
    size: () => Promise.resolve(ready.size),
  };
}
