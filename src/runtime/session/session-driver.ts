// Drives sessions on this replica: claims a session's lease, runs its pending turns one after
// another while renewing the lease, and releases it when nothing is left. At most one loop per
// session per replica; the lease keeps other replicas out.
import { setMaxListeners } from "node:events";
import type { SessionId } from "../../domain/ids.js";
import type { TurnInputClaim } from "../../domain/inputs.js";
import { INPUTS_PER_TURN, type StartedTurn } from "./turn-start.js";
import { isTetherError } from "../../domain/errors.js";
import { fenceOf, type LeaseFence, type SessionExecutionLease } from "../../domain/lease.js";
import { announceCommittedTurn } from "./completion-recovery.js";
import type { RuntimeDeps } from "../deps.js";
import { onAbort } from "../stream/index.js";
import { createLeaseKeeper } from "./lease-keeper.js";
import { executeTurn, turnIdOf, type TurnWork } from "../turn/index.js";
import { admitToQuota } from "../limits/index.js";
import { afterTurn, logHoldStep, logLoopFailure } from "./after-turn.js";
import {
  clearReadyMark,
  hasPendingWork,
  nextTurn,
  parkedWake,
  turnWork,
  type Parked,
} from "./next-turn.js";
import { reportTurnRun } from "./turn-end-metrics.js";
import { createStartPacer } from "./start-pacer.js";

export type DriveOutcome =
  | { kind: "driving" }
  | { kind: "already_driving" }
  | { kind: "busy"; holder: SessionExecutionLease }
  | { kind: "stopping" };

export interface SessionDriver {
  /** Starts draining the session here unless another holder has it. */
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
   * Stops taking new sessions and hands over turns that wait for a client; waits for running
   * loops up to `timeoutMs`, then aborts them. Reports whether every lease was released.
   */
  drain(timeoutMs: number): Promise<{ released: boolean }>;
}

/** A lease this replica acquired, and whether its session was vacant (LeaseClaimOutcome). */
interface Claimed {
  fence: LeaseFence;
  vacant: boolean;
  /** What a turn start's step claimed and read under the lease (store.startTurn). */
  started?: {
    inputs: TurnInputClaim | undefined;
    loaded: NonNullable<TurnWork["loaded"]>;
  };
}

const claimed = (outcome: { lease: SessionExecutionLease; vacant: boolean }): Claimed => ({
  fence: fenceOf(outcome.lease),
  vacant: outcome.vacant,
});

/** What a hold's signal aborts with (a reason of its own: no DOMException built per hold). */
const HOLD_ENDED = new Error("lease hold ended");

export function createSessionDriver(deps: RuntimeDeps): SessionDriver {
  const loops = new Map<
    SessionId,
    { done: Promise<void>; stop: AbortController; poked: boolean }
  >();
  let stopping = false;
  // Told to every turn: a turn waiting for a client hands its session over when this aborts.
  const draining = new AbortController();
  // Every running turn listens on it: many listeners are expected, not a leak.
  setMaxListeners(0, draining.signal);
  let unreleased = 0;
  // One renewal timer and call for every lease this replica holds.
  const keeper = createLeaseKeeper(deps);
  const pacer = createStartPacer(deps.turnStartsPerIteration ?? 0);
  // Sessions whose lease this replica holds and has not lost (only its own turns write their
  // logs), each with a signal that aborts when the hold ends: a watch listens on it.
  // A hold is its lease's: a loop that stepped aside (its commit released the lease) ends its own.
  const holds = new Map<SessionId, { ended: AbortController; fencingToken: number }>();
  const held = {
    add({ sessionId, fencingToken }: LeaseFence): void {
      const current = holds.get(sessionId);
      if (current?.fencingToken === fencingToken) return;
      current?.ended.abort(HOLD_ENDED);
      holds.set(sessionId, { ended: new AbortController(), fencingToken });
    },
  };
  const endHold = ({ sessionId, fencingToken }: LeaseFence): void => {
    const hold = holds.get(sessionId);
    if (hold?.fencingToken !== fencingToken) return;
    holds.delete(sessionId);
    hold.ended.abort(HOLD_ENDED);
  };

  async function drive(
    sessionId: SessionId,
    first: Claimed,
    stop: AbortController,
    detach: () => void,
  ) {
    let lease: Claimed | undefined = first;
    while (lease && !stop.signal.aborted) {
      const ended = await runWhileHeld(lease, stop.signal, detach);
      // A replica that just lost a lease (a stall, a partition) leaves the session to the others:
      // its claims stay in the store for a successor, and the ready hint stays set.
      if (ended === "lost") return;
      if (typeof ended === "object") {
        // Parked and waiting: the session is looked at again when the turn expires, or at the
        // recheck (a wake-up lost between an answer and its ready mark costs at most that).
        if (ended.wakeAtMs === undefined) {
          lease = stopping ? undefined : await claim(sessionId);
          continue;
        }
        await deps.ready.wakeAt(sessionId, ended.wakeAtMs).catch(() => undefined);
        return;
      }
      if (ended === "idle") {
        // Released in the step that found nothing waiting: input that comes now drives anew at
        // once (a new loop claims the lease) instead of poking this one, which only clears the
        // ready mark before it ends (not under a loop that took the session since; not where the
        // release cleared it, ADR 0024); a watch for that input then sees the session held here.
        // Input stored since the release keeps its mark (clearReadyMark looks after clearing).
        detach();
        const clear = !loops.has(sessionId) && !deps.store.keepsReadyIndex;
        if (clear) await clearReadyMark(deps, sessionId).catch(() => undefined);
        return;
      }
      // Input submitted between our last empty claim and the release found us busy; look again.
      // Nothing found, the mark is cleared, and the look repeated after the clear (ADR 0026).
      let pending = await hasPendingWork(deps, sessionId);
      if (!pending) pending = await clearReadyMark(deps, sessionId);
      lease = pending && !stopping ? await claim(sessionId) : undefined;
    }
  }

  /**
   * A new hold never re-enters a lease this replica left (a failed turn, a commit with no reply):
   * it keeps its generation, so an idle claim would skip the inputs the left turn claimed and run
   * later ones first. Released and claimed afresh, not vacant (the left turn is announced if it
   * committed). `afterHold`: the caller is a loop whose hold has ended. */
  async function claimLease(sessionId: SessionId, afterHold = false) {
    const outcome = await deps.store.tryClaimLease(sessionId, deps.owner, deps.leaseTtlMs);
    const left = outcome.kind === "acquired" && outcome.reentered;
    if (!left || (!afterHold && loops.has(sessionId))) return outcome;
    await deps.store.releaseLease(fenceOf(outcome.lease));
    const again = await deps.store.tryClaimLease(sessionId, deps.owner, deps.leaseTtlMs);
    return again.kind === "acquired" ? { ...again, vacant: false } : again;
  }

  async function claim(sessionId: SessionId): Promise<Claimed | undefined> {
    const outcome = await claimLease(sessionId, true);
    deps.metrics?.countLeaseClaim(
      outcome.kind === "acquired" && outcome.reentered ? "reentered" : outcome.kind,
    );
    deps.logger.info(
      {
        sessionId,
        result: outcome.kind,
        fencingToken:
          outcome.kind === "acquired" ? outcome.lease.fencingToken : outcome.holder.fencingToken,
        holder: outcome.kind === "busy" ? outcome.holder.owner.ownerId : deps.owner.ownerId,
      },
      "lease claim",
    );
    return outcome.kind === "acquired" ? claimed(outcome) : undefined;
  }

  /**
   * Runs turns until nothing is claimable, then releases the lease. A turn that parks ends the
   * hold (the store released the lease); a parked turn found waiting ends it too.
   */
  async function runWhileHeld(
    holding: Claimed,
    stopSignal: AbortSignal,
    stepAside: () => void,
  ): Promise<"drained" | "idle" | "lost" | "stopped" | Parked> {
    const { fence } = holding;
    const lost = new AbortController();
    held.add(fence);
    onAbort(lost.signal, () => endHold(fence));
    const unhearStop = onAbort(stopSignal, () => lost.abort(new Error("replica stopping")));
    const unkeep = keeper.keep(fence, (error) => lost.abort(error));
    const ended = (): "lost" | "stopped" => (stopSignal.aborted ? "stopped" : "lost");
    let released = false;
    let leaveLease = false;
    try {
      // The first claim goes out with the completion check (one round trip); a turn start's
      // step made it already.
      let firstClaim: Promise<TurnInputClaim | undefined> | undefined = holding.started
        ? Promise.resolve(holding.started.inputs)
        : deps.store.claimInputs(fence, { kind: "idle" }, INPUTS_PER_TURN);
      firstClaim.catch(() => undefined);
      let loaded = holding.started?.loaded;
      try {
        // A holder releases only after its last turn was announced (or leaves the lease to
        // expire): a session it released has nothing to announce.
        if (!holding.vacant) await announceCommittedTurn(deps, fence);
      } catch (error) {
        if (isTetherError(error, "session_execution_lease_expired")) return ended();
        // What needed announcing still does: the lease expires for the next holder to look.
        leaveLease = true;
        throw error;
      }
      while (!lost.signal.aborted && !stopping) {
        let next;
        try {
          next = await nextTurn(deps, fence, firstClaim);
          firstClaim = undefined;
        } catch (error) {
          if (isTetherError(error, "session_execution_lease_expired")) return ended();
          throw error;
        }
        if (next === "again") continue;
        if (next === "drained" || !("claims" in next)) return next;
        const work = turnWork(fence, next.claims, lost.signal, draining.signal, loaded);
        // A commit that released the lease steps this loop aside at once: the next input, sent
        // when its client saw turn_completed, starts a loop of its own instead of poking this
        // one. The hold ends when the turn has (a watch still reading this turn keeps it).
        work.onReleased = () => {
          released = true;
          stepAside();
        };
        loaded = undefined;
        // Refused by a quota, the turn does not start: its claims stay for the next holder.
        const quota = await admitToQuota(deps, keeper, fence.sessionId, turnIdOf(work));
        if (quota.kind === "wait") return { wakeAtMs: quota.wakeAtMs };
        await pacer.slot();
        const reportEnd = reportTurnRun(deps, fence.sessionId, next.claims);
        const end = await executeTurn(deps, work).finally(quota.release);
        reportEnd(end);
        const step = afterTurn(end);
        logHoldStep(deps.logger, fence, step);
        switch (step.kind) {
          case "next_turn":
            break;
          case "released":
            // The commit released the lease in its step (nothing waited for a holder).
            released = true;
            endHold(fence);
            return "idle";
          case "await_parked":
            return parkedWake(deps, step.expiresAtMs, step.resumable);
          case "hand_over":
            // Its claims stay for a successor (the ready hint is still set), which re-runs the
            // turn under the same id; the lease is released below.
            return "stopped";
          case "lost":
            leaveLease = step.leaveLease;
            return ended();
          case "fail":
            leaveLease = step.leaveLease;
            throw step.cause;
        }
        if (lost.signal.aborted || stopping) break;
        // After a turn, one step releases the lease unless something waits for a holder: the
        // empty claims, the parked-turn look and the pending-work check after the release that
        // would follow are not needed then (nothing can slip in between claim and release).
        // A fence that no longer holds the lease answers not_held (never an error).
        const release = await deps.store.releaseIfIdle(fence);
        if (release.kind === "released") {
          released = true;
          endHold(fence);
          return "idle";
        }
        if (release.kind !== "pending") return ended();
      }
      return lost.signal.aborted ? ended() : "stopped";
    } finally {
      unkeep();
      unhearStop();
      endHold(fence);
      if (!released && !leaveLease) await releaseOnce(fence);
    }
  }

  async function releaseOnce(fence: LeaseFence): Promise<void> {
    await deps.store.releaseLease(fence).catch((error: unknown) => {
      unreleased++;
      deps.logger.warn(
        { sessionId: fence.sessionId, fencingToken: fence.fencingToken, error },
        "lease release failed; it expires after its TTL",
      );
    });
  }

  /** A loop for the session on this replica, under the lease it just acquired. */
  function startLoop(sessionId: SessionId, first: Claimed): DriveOutcome {
    const stop = new AbortController();
    const entry = { done: Promise.resolve(), stop, poked: false };
    const detach = (): void => {
      if (loops.get(sessionId) === entry) loops.delete(sessionId);
    };
    entry.done = drive(sessionId, first, stop, detach)
      .catch((error: unknown) => logLoopFailure(deps.logger, sessionId, error))
      .finally(() => {
        detach();
        if (entry.poked && !stopping) void driver.ensureDriven(sessionId).catch(() => undefined);
      });
    loops.set(sessionId, entry);
    return { kind: "driving" };
  }

  const driver: SessionDriver = {
    async ensureDriven(sessionId) {
      if (stopping) return { kind: "stopping" };
      const running = loops.get(sessionId);
      if (running) {
        // The loop may be past its last look for work; the poke makes it look once more.
        running.poked = true;
        return { kind: "already_driving" };
      }
      let outcome = await claimLease(sessionId);
      deps.metrics?.countLeaseClaim(
        outcome.kind === "acquired" && outcome.reentered ? "reentered" : outcome.kind,
      );
      if (
        outcome.kind === "busy" &&
        deps.liveness.isProvablyDead(outcome.holder.owner, deps.owner)
      ) {
        // The holder was a process on this host and boot that no longer runs (a restarted
        // container): take over now instead of waiting out its TTL.
        const observed = fenceOf(outcome.holder);
        outcome = await deps.store.reclaimLease(sessionId, deps.owner, observed, deps.leaseTtlMs);
        deps.metrics?.countLeaseClaim(outcome.kind === "acquired" ? "reclaimed" : "busy");
        deps.logger.info(
          {
            sessionId,
            deadHolder: observed.owner.ownerId,
            fencingToken: observed.fencingToken,
            result: outcome.kind,
          },
          "lease reclaim from a dead local holder",
        );
      }
      if (outcome.kind === "busy") {
        // Another holder drains the session itself; the sweep recovers it if that holder dies.
        return { kind: "busy", holder: outcome.holder };
      }
      const again = loops.get(sessionId);
      if (again) {
        again.poked = true;
        return { kind: "already_driving" };
      }
      return startLoop(sessionId, claimed(outcome));
    },
    async driveStarted(sessionId, started) {
      const { lease, inputs, ...loaded } = started;
      const fence = fenceOf(lease);
      deps.metrics?.countLeaseClaim("acquired");
      if (stopping || loops.has(sessionId)) {
        await releaseOnce(fence);
        return driver.ensureDriven(sessionId);
      }
      return startLoop(sessionId, {
        fence,
        vacant: true,
        started: { inputs, loaded },
      });
    },
    activeSessions: () => loops.size,
    isDriving: (sessionId) => loops.has(sessionId),
    holdOf: (sessionId) => holds.get(sessionId)?.ended.signal,
    async drain(timeoutMs) {
      stopping = true;
      unreleased = 0;
      draining.abort();
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
      return { released: unreleased === 0 };
    },
  };
  return driver;
}
