// Lease operations of the memory store: claim, renew, release, reclaim.
import { randomUUID } from "node:crypto";
import { isTetherError, leaseExpired } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import {
  sameHolder,
  type LeaseClaimOutcome,
  type LeaseFence,
  type LeaseRenewal,
  type LeaseOwner,
  type IdleReleaseOutcome,
  type LeaseReleaseOutcome,
  type SessionExecutionLease,
} from "../../domain/lease.js";
import { logLeaseClaim, logLeaseReclaim, logRenewalRefused } from "../shared/store-log.js";
import { atomically, nextGeneration, type MemoryContext } from "./context.js";
import { copy, liveLease, type SessionCell } from "./session-cell.js";

export function acquire(
  ctx: MemoryContext,
  cell: SessionCell,
  owner: LeaseOwner,
  ttlMs: number,
  nowMs: number,
  vacant: boolean,
): LeaseClaimOutcome {
  const lease: SessionExecutionLease = {
    sessionId: cell.sessionId,
    owner: copy(owner),
    leaseToken: randomUUID(),
    fencingToken: nextGeneration(ctx, cell.sessionId, nowMs),
    expiresAtMs: nowMs + ttlMs,
  };
  cell.lease = lease;
  return { kind: "acquired", lease: copy(lease), reentered: false, vacant };
}

export function tryClaimLease(
  ctx: MemoryContext,
  sessionId: SessionId,
  owner: LeaseOwner,
  ttlMs: number,
): Promise<LeaseClaimOutcome> {
  return atomically(ctx, sessionId, (cell, nowMs) => {
    const outcome = claim(ctx, cell, owner, ttlMs, nowMs);
    logLeaseClaim(ctx.log, sessionId, owner, ttlMs, outcome);
    return outcome;
  });
}

function claim(
  ctx: MemoryContext,
  cell: SessionCell,
  owner: LeaseOwner,
  ttlMs: number,
  nowMs: number,
): LeaseClaimOutcome {
  const current = liveLease(cell, nowMs);
  if (!current) return acquire(ctx, cell, owner, ttlMs, nowMs, cell.lease === undefined);
  if (sameHolder(current.owner, owner)) {
    current.expiresAtMs = nowMs + ttlMs;
    return { kind: "acquired", lease: copy(current), reentered: true, vacant: false };
  }
  return { kind: "busy", holder: copy(current) };
}

function matchesFence(lease: SessionExecutionLease | undefined, fence: LeaseFence): boolean {
  return (
    lease !== undefined &&
    lease.leaseToken === fence.leaseToken &&
    lease.fencingToken === fence.fencingToken
  );
}

export function renewLease(
  ctx: MemoryContext,
  fence: LeaseFence,
  ttlMs: number,
): Promise<SessionExecutionLease> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    const current = liveLease(cell, nowMs);
    if (!current || !matchesFence(current, fence)) {
      logRenewalRefused(ctx.log, fence, ttlMs);
      throw leaseExpired(fence.sessionId, fence.fencingToken);
    }
    current.expiresAtMs = nowMs + ttlMs;
    return copy(current);
  });
}

/** Each fence in its own step: a renewal only ever touches its own session. */
export function renewLeases(
  ctx: MemoryContext,
  fences: readonly LeaseFence[],
  ttlMs: number,
): Promise<LeaseRenewal[]> {
  return Promise.all(
    fences.map((fence) =>
      renewLease(ctx, fence, ttlMs).then(
        (lease): LeaseRenewal => ({ kind: "renewed", expiresAtMs: lease.expiresAtMs }),
        (error: unknown): LeaseRenewal => {
          if (isTetherError(error, "session_execution_lease_expired")) return { kind: "expired" };
          throw error;
        },
      ),
    ),
  );
}

export function releaseLease(ctx: MemoryContext, fence: LeaseFence): Promise<LeaseReleaseOutcome> {
  return atomically(ctx, fence.sessionId, (cell) => {
    if (!matchesFence(cell.lease, fence)) return { kind: "not_held" };
    cell.lease = undefined;
    return { kind: "released" };
  });
}

/** Nothing waits for a holder: what hasPendingWork in the driver looked for, in one step. */
export function waitsForHolder(cell: SessionCell): boolean {
  if (cell.parked) return true;
  for (const batch of cell.batches.values()) {
    if (batch.state === "ready" || batch.state === "claimed") return true;
  }
  for (const input of cell.inputs.values()) {
    if (input.state === "claimed") return true;
    if (input.state === "pending" && input.delivery.kind === "next_turn") return true;
  }
  return false;
}

export function releaseIfIdle(ctx: MemoryContext, fence: LeaseFence): Promise<IdleReleaseOutcome> {
  return atomically(ctx, fence.sessionId, (cell) => {
    if (!matchesFence(cell.lease, fence)) return { kind: "not_held" };
    if (waitsForHolder(cell)) return { kind: "pending" };
    cell.lease = undefined;
    return { kind: "released" };
  });
}

export function reclaimLease(
  ctx: MemoryContext,
  sessionId: SessionId,
  claimant: LeaseOwner,
  observed: LeaseFence,
  ttlMs: number,
): Promise<LeaseClaimOutcome> {
  // The liveness verdict concerns the observed holder; the step below decides whether that
  // holder is still the current one.
  const observedDead = ctx.probe.isProvablyDead(observed.owner, claimant);
  return atomically(ctx, sessionId, (cell, nowMs) => {
    const current = liveLease(cell, nowMs);
    const outcome: LeaseClaimOutcome =
      !current || (matchesFence(current, observed) && observedDead)
        ? acquire(ctx, cell, claimant, ttlMs, nowMs, false)
        : { kind: "busy", holder: copy(current) };
    logLeaseReclaim(ctx.log, sessionId, claimant, observed, observedDead, ttlMs, outcome);
    return outcome;
  });
}

export function currentLease(
  ctx: MemoryContext,
  sessionId: SessionId,
): Promise<SessionExecutionLease | undefined> {
  return atomically(ctx, sessionId, (cell, nowMs) => {
    const lease = liveLease(cell, nowMs);
    return lease ? copy(lease) : undefined;
  });
}
