// How the driver takes and lets go a session's lease: the claim a loop starts with (with the
// early reclaim from a dead local holder), the claim a loop makes again after its hold ended, and
// the release that may fail (the lease then expires after its TTL; a drain reports it).
import type { SessionId } from "../../domain/ids.js";
import type { TurnInputClaim } from "../../domain/inputs.js";
import {
  fenceOf,
  type LeaseClaimOutcome,
  type LeaseFence,
  type SessionExecutionLease,
} from "../../domain/lease.js";
import type { RuntimeDeps } from "../deps.js";
import type { TurnWork } from "../turn/index.js";

/** A lease this replica acquired, and whether its session was vacant (LeaseClaimOutcome). */
export interface Claimed {
  fence: LeaseFence;
  vacant: boolean;
  /** What a turn start's step claimed and read under the lease (store.startTurn). */
  started?: {
    inputs: TurnInputClaim | undefined;
    loaded: NonNullable<TurnWork["loaded"]>;
  };
}

export const claimed = (outcome: { lease: SessionExecutionLease; vacant: boolean }): Claimed => ({
  fence: fenceOf(outcome.lease),
  vacant: outcome.vacant,
});

export interface LeaseClaims {
  /** The claim a new loop starts with; busy when another live holder has the session. */
  forNewLoop(
    sessionId: SessionId,
  ): Promise<
    { kind: "acquired"; claimed: Claimed } | { kind: "busy"; holder: SessionExecutionLease }
  >;
  /** The claim of a loop whose hold has ended; undefined when it did not get the lease. */
  again(sessionId: SessionId): Promise<Claimed | undefined>;
  /** Lets the lease go; a failure is logged and counted (the lease expires after its TTL). */
  release(fence: LeaseFence): Promise<void>;
  /** Releases that failed since the last reset. */
  unreleased(): number;
  resetUnreleased(): void;
}

/** `looping`: a loop of this replica runs the session. */
export function createLeaseClaims(
  deps: RuntimeDeps,
  looping: (sessionId: SessionId) => boolean,
): LeaseClaims {
  let unreleased = 0;
  const countClaim = (outcome: LeaseClaimOutcome): void =>
    deps.metrics?.countLeaseClaim(
      outcome.kind === "acquired" && outcome.reentered ? "reentered" : outcome.kind,
    );

  /**
   * A new hold never re-enters a lease this replica left (a failed turn, a commit with no reply):
   * it keeps its generation, so an idle claim would skip the inputs the left turn claimed and run
   * later ones first. Released and claimed afresh, not vacant (the left turn is announced if it
   * committed). `afterHold`: the caller is a loop whose hold has ended. */
  async function claimLease(sessionId: SessionId, afterHold = false): Promise<LeaseClaimOutcome> {
    const outcome = await deps.store.tryClaimLease(sessionId, deps.owner, deps.leaseTtlMs);
    const left = outcome.kind === "acquired" && outcome.reentered;
    if (!left || (!afterHold && looping(sessionId))) return outcome;
    await deps.store.releaseLease(fenceOf(outcome.lease));
    const again = await deps.store.tryClaimLease(sessionId, deps.owner, deps.leaseTtlMs);
    return again.kind === "acquired" ? { ...again, vacant: false } : again;
  }

  return {
    async forNewLoop(sessionId) {
      let outcome = await claimLease(sessionId);
      countClaim(outcome);
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
      return outcome.kind === "busy"
        ? { kind: "busy", holder: outcome.holder }
        : { kind: "acquired", claimed: claimed(outcome) };
    },
    async again(sessionId) {
      const outcome = await claimLease(sessionId, true);
      countClaim(outcome);
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
    },
    async release(fence) {
      await deps.store.releaseLease(fence).catch((error: unknown) => {
        unreleased++;
        deps.logger.warn(
          { sessionId: fence.sessionId, fencingToken: fence.fencingToken, error },
          "lease release failed; it expires after its TTL",
        );
      });
    },
    unreleased: () => unreleased,
    resetUnreleased: () => {
      unreleased = 0;
    },
  };
}
