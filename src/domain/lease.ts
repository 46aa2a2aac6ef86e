// Session execution leases: who may execute a session, under which fencing generation.
// Holder identity, per-claim token and generation are separate fields on purpose: identity
// decides re-entry, the token proves a specific claim, the generation orders claims in time.
import type { SessionId } from "./ids.js";

export type LeaseOwnerLiveness =
  | { kind: "opaque" }
  | {
      kind: "local_process";
      hostId: string;
      bootId: string;
      pid: number;
      /** Start time of the process as the OS reports it; tells a reused pid from the holder. */
      processStart: string;
    };

export interface LeaseOwner {
  /** Stable per worker (e.g. pod name). */
  ownerId: string;
  /** New on every process start; the same owner in a new incarnation is another holder. */
  incarnationId: string;
  liveness: LeaseOwnerLiveness;
}

export interface SessionExecutionLease {
  sessionId: SessionId;
  owner: LeaseOwner;
  /** Random per acquisition; re-entry keeps it. */
  leaseToken: string;
  /** The lease generation: strictly greater than every token issued before for the session. */
  fencingToken: number;
  /** Epoch milliseconds by the store's clock. */
  expiresAtMs: number;
}

/** What a caller presents to prove execution authority. */
export interface LeaseFence {
  sessionId: SessionId;
  owner: LeaseOwner;
  leaseToken: string;
  fencingToken: number;
}

export type LeaseClaimOutcome =
  | {
      kind: "acquired";
      lease: SessionExecutionLease;
      reentered: boolean;
      /**
       * No lease was left behind: the session was never held, or its last holder released it
       * (rather than letting it expire). Always false for a re-entry and a reclaim.
       */
      vacant: boolean;
    }
  | { kind: "busy"; holder: SessionExecutionLease };

export type LeaseReleaseOutcome = { kind: "released" } | { kind: "not_held" };

/** releaseIfIdle: `pending` kept the lease, because something waits for a holder. */
export type IdleReleaseOutcome = LeaseReleaseOutcome | { kind: "pending" };

export function fenceOf(lease: SessionExecutionLease): LeaseFence {
  return {
    sessionId: lease.sessionId,
    owner: lease.owner,
    leaseToken: lease.leaseToken,
    fencingToken: lease.fencingToken,
  };
}

export function sameHolder(a: LeaseOwner, b: LeaseOwner): boolean {
  return a.ownerId === b.ownerId && a.incarnationId === b.incarnationId;
}

export const MAX_LEASE_TTL_MS = 24 * 60 * 60 * 1000;

/** renewLeases: one outcome per fence, in the order asked; `expired` renewed nothing. */
export type LeaseRenewal = { kind: "renewed"; expiresAtMs: number } | { kind: "expired" };

/** Fences one renewLeases call takes: a replica renews more in several calls. */
export const MAX_RENEWALS_PER_CALL = 500;
