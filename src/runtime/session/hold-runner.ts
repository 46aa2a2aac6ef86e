// One hold of a session's lease: runs the session's turns one after another while the lease is
// renewed, until nothing is claimable, the lease is lost or the replica closes, and says how the
// hold ended (HoldEnd). A turn that parks ends the hold (the store released the lease); a parked
// turn found waiting ends it too.
import { setMaxListeners } from "node:events";
import { isTetherError } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { TurnInputClaim } from "../../domain/inputs.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { RuntimeDeps } from "../deps.js";
import {
  admitToQuota,
  createTurnCharges,
  type QuotaAdmission,
  type SlotKeeper,
  type TurnCharges,
} from "../limits/index.js";
import { onAbort } from "../stream/index.js";
import { executeTurn, turnIdOf, type TurnWork } from "../turn/index.js";
import { afterTurn, logHoldStep } from "./after-turn.js";
import { announceCommittedTurn } from "./completion-recovery.js";
import { assertNever, type HoldEnd } from "./hold-end.js";
import type { Claimed } from "./lease-claim.js";
import { createLeaseKeeper } from "./lease-keeper.js";
import { nextTurn, turnWork } from "./next-turn.js";
import { createStartPacer } from "./start-pacer.js";
import { INPUTS_PER_TURN } from "./turn-start.js";
import { reportTurnRun } from "./turn-end-metrics.js";

/** What a hold's signal aborts with (a reason of its own: no DOMException built per hold). */
const HOLD_ENDED = new Error("lease hold ended");

/**
 * Sessions whose lease this replica holds and has not lost (only its own turns write their
 * logs), each with a signal that aborts when the hold ends: a watch listens on it. A hold is its
 * lease's: a loop that stepped aside (its commit released the lease) ends its own.
 */
function createHeldLeases() {
  const holds = new Map<SessionId, { ended: AbortController; fencingToken: number }>();
  return {
    add({ sessionId, fencingToken }: LeaseFence): void {
      const current = holds.get(sessionId);
      if (current?.fencingToken === fencingToken) return;
      current?.ended.abort(HOLD_ENDED);
      holds.set(sessionId, { ended: new AbortController(), fencingToken });
    },
    end({ sessionId, fencingToken }: LeaseFence): void {
      const hold = holds.get(sessionId);
      if (hold?.fencingToken !== fencingToken) return;
      holds.delete(sessionId);
      hold.ended.abort(HOLD_ENDED);
    },
    signalOf: (sessionId: SessionId) => holds.get(sessionId)?.ended.signal,
  };
}

export interface HoldRunner {
  /** Holds `holding` until the hold ends; `stepAside` detaches the loop (its commit released). */
  run(holding: Claimed, stopSignal: AbortSignal, stepAside: () => void): Promise<HoldEnd>;
  /** The signal of this replica's hold on the session, while it has one (LocalDriving). */
  holdOf(sessionId: SessionId): AbortSignal | undefined;
  /** The replica closes: running turns waiting for a client hand their sessions over. */
  close(): void;
}

export function createHoldRunner(
  deps: RuntimeDeps,
  releaseLease: (fence: LeaseFence) => Promise<void>,
): HoldRunner {
  // Told to every turn: a turn waiting for a client hands its session over when this aborts.
  const closing = new AbortController();
  // Every running turn listens on it: many listeners are expected, not a leak.
  setMaxListeners(0, closing.signal);
  // One renewal timer and call for every lease this replica holds.
  const keeper = createLeaseKeeper(deps);
  const pacer = createStartPacer(deps.turnStartsPerIteration ?? 0);
  const held = createHeldLeases();
  const isClosing = (): boolean => closing.signal.aborted;

  async function run(
    holding: Claimed,
    stopSignal: AbortSignal,
    stepAside: () => void,
  ): Promise<HoldEnd> {
    const { fence } = holding;
    const lost = new AbortController();
    held.add(fence);
    onAbort(lost.signal, () => held.end(fence));
    const unhearStop = onAbort(stopSignal, () => lost.abort(new Error("replica stopping")));
    const unkeep = keeper.keep(fence, (error) => lost.abort(error));
    const ended = (): HoldEnd => ({ kind: stopSignal.aborted ? "closing" : "lost" });
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
      while (!lost.signal.aborted && !isClosing()) {
        let next;
        try {
          next = await nextTurn(deps, fence, firstClaim);
          firstClaim = undefined;
        } catch (error) {
          if (isTetherError(error, "session_execution_lease_expired")) return ended();
          throw error;
        }
        if (next.kind === "again") continue;
        if (next.kind !== "turn") return next;
        const work = turnWork(fence, next.claims, lost.signal, closing.signal, loaded);
        // A commit that released the lease steps this loop aside at once: the next input, sent
        // when its client saw turn_completed, starts a loop of its own instead of poking this
        // one. The hold ends when the turn has (a watch still reading this turn keeps it).
        work.onReleased = () => {
          released = true;
          stepAside();
        };
        loaded = undefined;
        // Refused by a quota, the turn does not start: its claims stay for the next holder.
        const { quota, charges } = await admitWork(deps, keeper, work);
        if (quota.kind === "wait") return { kind: "quota_wait", wakeAtMs: quota.wakeAtMs };
        await pacer.slot();
        const reportEnd = reportTurnRun(deps, fence.sessionId, next.claims);
        // Whatever the commit did not carry goes with the separate steps once the turn ended.
        const end = await executeTurn(deps, work).finally(() =>
          Promise.all([quota.release(), charges.settle()]),
        );
        reportEnd(end);
        const step = afterTurn(end, deps.clock.nowMs());
        logHoldStep(deps.logger, fence, step);
        switch (step.kind) {
          case "next_turn":
            break;
          case "end":
            leaveLease = step.leaveLease;
            if (step.end.kind === "lost") return ended();
            if (step.end.kind === "released") {
              // The commit released the lease in its step (nothing waited for a holder).
              released = true;
              held.end(fence);
            }
            return step.end;
          case "fail":
            leaveLease = step.leaveLease;
            throw step.cause;
          default:
            assertNever(step);
        }
        if (lost.signal.aborted || isClosing()) break;
        // After a turn, one step releases the lease unless something waits for a holder: the
        // empty claims, the parked-turn look and the pending-work check after the release that
        // would follow are not needed then (nothing can slip in between claim and release).
        // A fence that no longer holds the lease answers not_held (never an error).
        const release = await deps.store.releaseIfIdle(fence);
        if (release.kind === "released") {
          released = true;
          held.end(fence);
          return { kind: "released" };
        }
        if (release.kind !== "pending") return ended();
      }
      return lost.signal.aborted ? ended() : { kind: "closing" };
    } finally {
      unkeep();
      unhearStop();
      held.end(fence);
      if (!released && !leaveLease) await releaseLease(fence);
    }
  }

  return { run, holdOf: held.signalOf, close: () => closing.abort() };
}

/**
 * What the turn owes its tenant's limits (its commit carries it where it can, ADR 0038) and its
 * quota admission: a slot the turn start's step took for it is the turn's, with no step of its
 * own, and the spend that step read answers the first budget check.
 */
async function admitWork(
  deps: RuntimeDeps,
  keeper: SlotKeeper,
  work: TurnWork,
): Promise<{ quota: QuotaAdmission; charges: TurnCharges }> {
  const sessionId = work.fence.sessionId;
  const charges = turnChargesOf(deps, sessionId);
  charges.primeSpend(work.loaded?.tenantSpend);
  work.charges = charges;
  const quota = await admitToQuota(deps, keeper, sessionId, turnIdOf(work), {
    charges,
    admittedSlot: work.loaded?.admittedSlot,
  });
  return { quota, charges };
}

/** A turn's charges on the runtime's store, quota store and spend store (ADR 0038). */
function turnChargesOf(deps: RuntimeDeps, sessionId: SessionId): TurnCharges {
  return createTurnCharges({
    sessionId,
    store: deps.store,
    quotas: deps.quotas?.store,
    spend: deps.budgets?.store,
    logger: deps.logger,
  });
}
