// Drives sessions on this replica: claims a session's lease, runs its pending turns one after
// another while renewing the lease (hold-runner.ts), and releases it when nothing is left. At
// most one loop per session per replica; the lease keeps other replicas out.
import type { SessionId } from "../../domain/ids.js";
import { fenceOf, type SessionExecutionLease } from "../../domain/lease.js";
import type { RuntimeDeps } from "../deps.js";
import { logLoopFailure } from "./after-turn.js";
import { assertNever } from "./hold-end.js";
import { createHoldRunner } from "./hold-runner.js";
import { createLeaseClaims, type Claimed } from "./lease-claim.js";
import { clearReadyMark, hasPendingWork } from "./next-turn.js";
import type { StartedTurn } from "./turn-start.js";

export type DriveOutcome =
  | { kind: "driving" }
  | { kind: "already_driving" }
  | { kind: "busy"; holder: SessionExecutionLease }
  /** The replica is closing: it takes no new session. */
  | { kind: "closing" };

export interface SessionDriver {
  /** Starts driving the session here unless another holder has it. */
  ensureDriven(sessionId: SessionId): Promise<DriveOutcome>;
  /**
   * Drives a session whose lease this replica took in a turn start's step (store.startTurn),
   * with what that step claimed and read. A loop of this replica still finishing on the session
   * (it released the lease in its last commit) cannot take it: the lease is released again, its
   * claims left for the next holder, and the session offered as by ensureDriven.
   */
  driveStarted(sessionId: SessionId, started: StartedTurn): Promise<DriveOutcome>;
  /** Loops running on this replica. */
  activeSessions(): number;
  /** A loop of this replica runs the session (it may be finishing). */
  isDriving(sessionId: SessionId): boolean;
  /**
   * While this replica holds the session's lease (and has not seen it lost): a signal that
   * aborts when the hold ends (LocalDriving).
   */
  holdOf(sessionId: SessionId): AbortSignal | undefined;
  /**
   * Closes: stops taking new sessions and hands over turns that wait for a client; waits for
   * running loops up to `timeoutMs`, then aborts them. Reports whether every lease was released.
   */
  close(timeoutMs: number): Promise<{ released: boolean }>;
}

interface Loop {
  done: Promise<void>;
  stop: AbortController;
  poked: boolean;
}

export function createSessionDriver(deps: RuntimeDeps): SessionDriver {
  const loops = new Map<SessionId, Loop>();
  let closing = false;
  const leases = createLeaseClaims(deps, (sessionId) => loops.has(sessionId));
  const holds = createHoldRunner(deps, leases.release);

  async function drive(
    sessionId: SessionId,
    first: Claimed,
    stop: AbortController,
    detach: () => void,
  ) {
    let lease: Claimed | undefined = first;
    while (lease && !stop.signal.aborted) {
      const ended = await holds.run(lease, stop.signal, detach);
      switch (ended.kind) {
        case "lost":
          // A replica that just lost a lease (a stall, a partition) leaves the session to the
          // others: its claims stay in the store for a successor, and the ready hint stays set.
          return;
        case "parked":
          // Parked and waiting: the session is looked at again when the turn expires, or at the
          // recheck (a wake-up lost between an answer and its ready mark costs at most that).
          if (ended.wakeAtMs === undefined) {
            lease = closing ? undefined : await leases.again(sessionId);
            continue;
          }
          await deps.ready.wakeAt(sessionId, ended.wakeAtMs).catch(() => undefined);
          return;
        case "quota_wait":
          await deps.ready.wakeAt(sessionId, ended.wakeAtMs).catch(() => undefined);
          return;
        case "released": {
          // Released in the step that found nothing waiting: input that comes now drives anew at
          // once (a new loop claims the lease) instead of poking this one, which only clears the
          // ready mark before it ends (not under a loop that took the session since; not where
          // the release cleared it, ADR 0024); a watch for that input then sees the session held
          // here. Input stored since the release keeps its mark (clearReadyMark looks after
          // clearing).
          detach();
          const clear = !loops.has(sessionId) && !deps.store.keepsReadyIndex;
          if (clear) await clearReadyMark(deps, sessionId).catch(() => undefined);
          return;
        }
        case "no_work":
        case "closing": {
          // Input submitted between our last empty claim and the release found us busy; look
          // again. Nothing found, the mark is cleared, and the look repeated after the clear
          // (ADR 0026).
          let pending = await hasPendingWork(deps, sessionId);
          if (!pending) pending = await clearReadyMark(deps, sessionId);
          lease = pending && !closing ? await leases.again(sessionId) : undefined;
          break;
        }
        default:
          assertNever(ended);
      }
    }
  }

  /** A loop for the session on this replica, under the lease it just acquired. */
  function startLoop(sessionId: SessionId, first: Claimed): DriveOutcome {
    const stop = new AbortController();
    const entry: Loop = { done: Promise.resolve(), stop, poked: false };
    const detach = (): void => {
      if (loops.get(sessionId) === entry) loops.delete(sessionId);
    };
    entry.done = drive(sessionId, first, stop, detach)
      .catch((error: unknown) => logLoopFailure(deps.logger, sessionId, error))
      .finally(() => {
        detach();
        if (entry.poked && !closing) void driver.ensureDriven(sessionId).catch(() => undefined);
      });
    loops.set(sessionId, entry);
    return { kind: "driving" };
  }

  /** The loop running the session, poked: it may be past its last look for work. */
  function poke(sessionId: SessionId): DriveOutcome | undefined {
    const running = loops.get(sessionId);
    if (!running) return undefined;
    running.poked = true;
    return { kind: "already_driving" };
  }

  const driver: SessionDriver = {
    async ensureDriven(sessionId) {
      if (closing) return { kind: "closing" };
      const running = poke(sessionId);
      if (running) return running;
      const outcome = await leases.forNewLoop(sessionId);
      // Another holder drives the session itself; the sweep recovers it if that holder dies.
      if (outcome.kind === "busy") return outcome;
      return poke(sessionId) ?? startLoop(sessionId, outcome.claimed);
    },
    async driveStarted(sessionId, started) {
      const { lease, inputs, ...loaded } = started;
      const fence = fenceOf(lease);
      deps.metrics?.countLeaseClaim("acquired");
      if (closing || loops.has(sessionId)) {
        await leases.release(fence);
        return driver.ensureDriven(sessionId);
      }
      return startLoop(sessionId, { fence, vacant: true, started: { inputs, loaded } });
    },
    activeSessions: () => loops.size,
    isDriving: (sessionId) => loops.has(sessionId),
    holdOf: (sessionId) => holds.holdOf(sessionId),
    close: (timeoutMs) => closeLoops(timeoutMs),
  };

  async function closeLoops(timeoutMs: number): Promise<{ released: boolean }> {
    closing = true;
    leases.resetUnreleased();
    holds.close();
    const all = Promise.all([...loops.values()].map((l) => l.done));
    let timeout: NodeJS.Timeout | undefined;
    const timer = new Promise<"timeout">((resolve) => {
      timeout = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const first = await Promise.race([all, timer]);
    clearTimeout(timeout);
    if (first === "timeout") {
      for (const loop of loops.values()) loop.stop.abort(new Error("drain timeout"));
      await all;
    }
    return { released: leases.unreleased() === 0 };
  }

  return driver;
}
