// A store that takes no announcement in a commit (as the wire's does not): the runtime then
// appends a turn's turn_completed on its own, after the commit, the path whose failure leaves a
// committed turn unannounced for completion recovery (ADR 0006, ADR 0011).
import type { RuntimeStore } from "../../src/ports/runtime-store.js";

export function withoutAnnouncements(store: RuntimeStore): RuntimeStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      // Nor does it say it announces: the runtime writes the turn's events before the commit.
      if (property === "announcesInCommit") return undefined;
      if (property !== "commit") return Reflect.get(target, property, receiver) as unknown;
      return ({ announce: _dropped, ...commit }: Parameters<RuntimeStore["commit"]>[0]) =>
        target.commit(commit);
    },
  });
}
