// Reports a turn's run to the metrics: a resume when a parked turn goes on, and the run's end
// (its TurnEnd kind, the committed outcome, how long the run took). A run is what one hold
// executes: a turn that parks and resumes is two runs, each timed on its own.
import type { SessionId } from "../../domain/ids.js";
import type { RuntimeDeps } from "../deps.js";
import type { TurnEnd, TurnWork } from "../turn/index.js";

/** Reports the run's start (a resume) now; the returned step reports its end. */
export function reportTurnRun(
  deps: Pick<RuntimeDeps, "metrics" | "clock">,
  sessionId: SessionId,
  claims: Pick<TurnWork, "resumed">,
): (end: TurnEnd) => void {
  const observe = deps.metrics?.observeTurn?.bind(deps.metrics);
  if (!observe) return () => undefined;
  const started = deps.clock.nowMs();
  if (claims.resumed) observe({ kind: "resumed", sessionId, status: claims.resumed.status });
  return (end) => {
    const outcome =
      end.kind === "finished"
        ? { kind: end.outcome.kind, reason: end.outcome.reason }
        : end.kind === "cancelled"
          ? { kind: "stopped", reason: "cancelled" }
          : undefined;
    const seconds = Math.max(0, deps.clock.nowMs() - started) / 1000;
    observe({ kind: "ended", sessionId, end: end.kind, outcome, seconds });
  };
}
