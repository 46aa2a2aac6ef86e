// Lease operations of the Redis store: claim, renew, release, reclaim, read. Each is one script
// call; tokens are generated here and the expiry is decided by the Redis clock.
import { randomUUID } from "node:crypto";
import { leaseExpired } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type {
  LeaseClaimOutcome,
  LeaseFence,
  LeaseOwner,
  IdleReleaseOutcome,
  LeaseReleaseOutcome,
  LeaseRenewal,
  SessionExecutionLease,
} from "../../domain/lease.js";
import { logLeaseClaim, logLeaseReclaim, logRenewalRefused } from "../shared/store-log.js";
import { decodeLease, ownerArgs } from "./codec.js";
import { withReadyKey, type RedisContext } from "./context.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

function claimOutcome(sessionId: SessionId, reply: ScriptReply): LeaseClaimOutcome {
  const lease = decodeLease(sessionId, reply);
  if (reply[0] === REPLY.BUSY) return { kind: "busy", holder: lease };
  return { kind: "acquired", lease, reentered: reply[5] === 1, vacant: reply[6] === 1 };
}

export async function tryClaimLease(
  ctx: RedisContext,
  sessionId: SessionId,
  owner: LeaseOwner,
  ttlMs: number,
): Promise<LeaseClaimOutcome> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "claimLease",
    [k.lease, k.generation],
    [...ownerArgs(owner), randomUUID(), ttlMs],
  );
  const outcome = claimOutcome(sessionId, reply);
  logLeaseClaim(ctx.log, sessionId, owner, ttlMs, outcome);
  return outcome;
}

export async function renewLease(
  ctx: RedisContext,
  fence: LeaseFence,
  ttlMs: number,
): Promise<SessionExecutionLease> {
  const reply = await ctx.scripts.run(
    "renewLease",
    [ctx.keys(fence.sessionId).lease],
    [fence.leaseToken, fence.fencingToken, ttlMs],
  );
  if (reply[0] !== REPLY.OK) {
    logRenewalRefused(ctx.log, fence, ttlMs);
    throw leaseExpired(fence.sessionId, fence.fencingToken);
  }
  return decodeLease(fence.sessionId, reply);
}

/**
 * One script call for all the fences on a standalone Redis (on the caller's connection: renewals
 * are fenced, so their order against a session's other calls does not matter). On Cluster a
 * script's keys must share a slot and every session has its own, so there each fence is its own
 * call (sent together).
 */
export async function renewLeases(
  ctx: RedisContext,
  fences: readonly LeaseFence[],
  ttlMs: number,
): Promise<LeaseRenewal[]> {
  if (fences.length === 0) return [];
  const groups = ctx.redis.isCluster ? fences.map((f) => [f]) : [fences];
  const replies = await Promise.all(
    groups.map((group) =>
      ctx.scripts.run(
        "renewLeases",
        group.flatMap((f) => [ctx.keys(f.sessionId).lease, ctx.eventKeys(f.sessionId).activeTurn]),
        [ttlMs, ...group.flatMap((f) => [f.leaseToken, f.fencingToken])],
      ),
    ),
  );
  const expiries = replies.flatMap((reply) => reply.slice(1).map(Number));
  return fences.map((fence, i) => {
    const expiresAtMs = expiries[i] ?? 0;
    if (expiresAtMs > 0) return { kind: "renewed", expiresAtMs };
    logRenewalRefused(ctx.log, fence, ttlMs);
    return { kind: "expired" };
  });
}

export async function releaseLease(
  ctx: RedisContext,
  fence: LeaseFence,
): Promise<LeaseReleaseOutcome> {
  const reply = await ctx.scripts.run(
    "releaseLease",
    [ctx.keys(fence.sessionId).lease],
    [fence.leaseToken, fence.fencingToken],
  );
  return reply[0] === REPLY.OK ? { kind: "released" } : { kind: "not_held" };
}

export async function releaseIfIdle(
  ctx: RedisContext,
  fence: LeaseFence,
): Promise<IdleReleaseOutcome> {
  const k = ctx.keys(fence.sessionId);
  const reply = await ctx.scripts.run(
    "releaseIfIdle",
    withReadyKey(ctx, [k.lease, k.inputs, k.inputIndex, k.head, k.workIndex, k.parked]),
    [fence.leaseToken, fence.fencingToken, fence.sessionId],
  );
  if (reply[0] === REPLY.OK) return { kind: "released" };
  return reply[0] === REPLY.BUSY ? { kind: "pending" } : { kind: "not_held" };
}

export async function reclaimLease(
  ctx: RedisContext,
  sessionId: SessionId,
  claimant: LeaseOwner,
  observed: LeaseFence,
  ttlMs: number,
): Promise<LeaseClaimOutcome> {
  // The pid lives on the claimant's host, so the claimant judges liveness; the script then
  // decides atomically whether the observed holder is still the current one.
  const observedDead = ctx.probe.isProvablyDead(observed.owner, claimant);
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "reclaimLease",
    [k.lease, k.generation],
    [
      ...ownerArgs(claimant),
      randomUUID(),
      ttlMs,
      observed.leaseToken,
      observed.fencingToken,
      observedDead ? "1" : "0",
    ],
  );
  const outcome = claimOutcome(sessionId, reply);
  logLeaseReclaim(ctx.log, sessionId, claimant, observed, observedDead, ttlMs, outcome);
  return outcome;
}

export async function currentLease(
  ctx: RedisContext,
  sessionId: SessionId,
): Promise<SessionExecutionLease | undefined> {
  const reply = await ctx.scripts.run("readLease", [ctx.keys(sessionId).lease], []);
  return reply[0] === REPLY.OK ? decodeLease(sessionId, reply) : undefined;
}
