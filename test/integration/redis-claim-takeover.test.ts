// Redis counterpart of the seed scenario in_memory_claim_validation_serializes_takeover_before_mutation:
// a stale owner's queue claim and a live owner's reclaim race on fresh sessions. The Lua script
// makes claim validation and mutation one step, so every run ends in one of two consistent
// orders, and the stale claim's completion never succeeds.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { isTetherError } from "../../src/domain/errors.js";
import { parseSessionId, type SessionId } from "../../src/domain/ids.js";
import { fenceOf, type LeaseOwner, type SessionExecutionLease } from "../../src/domain/lease.js";
import { queueClaimCompletion, type QueuedWorkClaim } from "../../src/domain/queue.js";
import type { RuntimeStore } from "../../src/ports/runtime-store.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import { createProcLivenessProbe } from "../../src/store/shared/local-process.js";
import { freshNamespace } from "../support/redis-store-factory.js";

const RUNS = 50;

const staleOwner: LeaseOwner = {
  ownerId: "atomic-stale-owner",
  incarnationId: "atomic-stale-owner:incarnation",
  liveness: {
    kind: "local_process",
    hostId: "atomic-host",
    bootId: "atomic-boot",
    pid: process.pid,
    processStart: "not-the-current-process-start",
  },
};

const liveOwner: LeaseOwner = {
  ownerId: "atomic-live-owner",
  incarnationId: "atomic-live-owner:incarnation",
  liveness: {
    kind: "local_process",
    hostId: "atomic-host",
    bootId: "atomic-boot",
    pid: process.pid,
    processStart: "atomic-live-start",
  },
};

type Order = "stale_claim_first" | "reclaim_first";

/** How the two calls are issued: in a fixed order on one connection, or racing on two. */
type Mode = "claim_then_reclaim" | "reclaim_then_claim" | "race";

let claimConnection: Redis;
let reclaimConnection: Redis;

beforeAll(() => {
  claimConnection = new Redis(inject("redisUrl"));
  reclaimConnection = new Redis(inject("redisUrl"));
});

afterAll(async () => {
  await Promise.all([claimConnection.quit(), reclaimConnection.quit()]);
});

function acquired(
  outcome: Awaited<ReturnType<RuntimeStore["tryClaimLease"]>>,
): SessionExecutionLease {
  if (outcome.kind !== "acquired") throw new Error(`busy: held by ${outcome.holder.owner.ownerId}`);
  return outcome.lease;
}

async function runOnce(mode: Mode, namespace: string): Promise<Order> {
  const probe = createProcLivenessProbe();
  const claimStore = createRedisStore({ redis: claimConnection, namespace, livenessProbe: probe });
  const reclaimStore =
    mode === "race"
      ? createRedisStore({ redis: reclaimConnection, namespace, livenessProbe: probe })
      : claimStore;
  const s: SessionId = parseSessionId(`atomic-generation-claim-${randomUUID()}`);

  const { batch } = await claimStore.enqueueWork({
    sessionId: s,
    workClass: "turn_work",
    deliveryPolicy: "earliest_safe_boundary",
    slotPolicy: "exclusive",
    payload: "atomic generation claim",
  });
  const staleLease = acquired(await claimStore.tryClaimLease(s, staleOwner, 60_000));

  // One connection keeps the order in which calls are issued; two connections race.
  const claim = () => claimStore.claimReadyWork(fenceOf(staleLease), "idle", 1);
  const reclaim = () => reclaimStore.reclaimLease(s, liveOwner, fenceOf(staleLease), 60_000);
  let claimResult: PromiseSettledResult<QueuedWorkClaim | undefined>;
  let reclaimOutcome: Awaited<ReturnType<RuntimeStore["reclaimLease"]>>;
  if (mode === "reclaim_then_claim") {
    const reclaiming = reclaim();
    [claimResult, reclaimOutcome] = await Promise.all([
      Promise.allSettled([claim()]).then(([r]) => r!),
      reclaiming,
    ]);
  } else {
    const claiming = Promise.allSettled([claim()]).then(([r]) => r!);
    [claimResult, reclaimOutcome] = await Promise.all([claiming, reclaim()]);
  }

  // The stale holder is provably dead, so the reclaim wins in both orders.
  const liveLease = acquired(reclaimOutcome);
  expect(liveLease.fencingToken).toBeGreaterThan(staleLease.fencingToken);

  if (claimResult.status === "rejected") {
    expect(isTetherError(claimResult.reason, "session_execution_lease_expired")).toBe(true);
    const liveClaim = await claimStore.claimReadyWork(fenceOf(liveLease), "idle", 1);
    expect(liveClaim?.batches.map((b) => b.batchId)).toEqual([batch.batchId]);
    expect(liveClaim?.batches[0]?.claimFencingToken).toBe(liveLease.fencingToken);
    return "reclaim_first";
  }

  const staleClaim = claimResult.value;
  expect(staleClaim?.batches.map((b) => b.batchId)).toEqual([batch.batchId]);
  if (!staleClaim) throw new Error("the stale claim took nothing");

  const liveClaim = await claimStore.claimReadyWork(fenceOf(liveLease), "idle", 1);
  expect(liveClaim?.batches.map((b) => b.batchId)).toEqual([batch.batchId]);
  expect(liveClaim?.fencingToken).toBeGreaterThan(staleClaim.fencingToken);

  const stale = await claimStore
    .commit({
      sessionId: s,
      expectedHeadRevision: 1, // the batch created the session
      appendMessages: ["stale completion"],
      releaseLease: fenceOf(liveLease),
      completeQueueClaims: [queueClaimCompletion(staleClaim)],
    })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(isTetherError(stale, "queued_work_claim_superseded")).toBe(true);

  // The refused commit changed nothing: the head the batch created, the lease held, the batch
  // still the live claim's.
  expect((await claimStore.loadSession(s))?.headRevision).toBe(1);
  expect((await claimStore.currentLease(s))?.leaseToken).toBe(liveLease.leaseToken);
  const [retained] = await claimStore.listWork(s);
  expect(retained).toMatchObject({
    batchId: batch.batchId,
    state: "claimed",
    claimId: liveClaim?.claimId,
    claimFencingToken: liveLease.fencingToken,
  });
  return "stale_claim_first";
}

describe("redis claim validation serializes a takeover before the mutation", () => {
  it(`ends consistent in every one of ${RUNS} runs, with both orders seen`, async () => {
    const namespace = freshNamespace("takeover");
    const seen: Record<Order, number> = { stale_claim_first: 0, reclaim_first: 0 };
    const modes: Mode[] = ["claim_then_reclaim", "reclaim_then_claim", "race"];
    for (let run = 0; run < RUNS; run++) {
      const mode = modes[run % modes.length] as Mode;
      const order = await runOnce(mode, namespace);
      if (mode === "claim_then_reclaim") expect(order).toBe("stale_claim_first");
      if (mode === "reclaim_then_claim") expect(order).toBe("reclaim_first");
      seen[order]++;
    }
    expect(seen.stale_claim_first).toBeGreaterThan(0);
    expect(seen.reclaim_first).toBeGreaterThan(0);
    expect(seen.stale_claim_first + seen.reclaim_first).toBe(RUNS);
  });
});
