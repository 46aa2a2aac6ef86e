// Port of the seed scenario `in_memory_claim_validation_serializes_takeover_before_mutation`:
// a stale owner's claim, paused between lease validation and mutation, holds off a concurrent
// takeover; the successor then re-claims the retained batch and the stale completion is refused.
import { describe, expect, it } from "vitest";
import { isTetherError } from "../../../src/domain/errors.js";
import type { SessionId } from "../../../src/domain/ids.js";
import { fenceOf, type LeaseOwner } from "../../../src/domain/lease.js";
import { queueClaimCompletion } from "../../../src/domain/queue.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { sleep } from "../../support/wait-for.js";

function localOwner(name: string, processStart: string): LeaseOwner {
  return {
    ownerId: `atomic-${name}-owner`,
    incarnationId: `atomic-${name}-owner:incarnation`,
    liveness: {
      kind: "local_process",
      hostId: "atomic-host",
      bootId: "atomic-boot",
      pid: process.pid,
      processStart,
    },
  };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe("memory store: claim validation serializes a takeover before mutation", () => {
  it("holds the reclaim until the validated claim has mutated, then supersedes it", async () => {
    const store = createMemoryStore();
    const sessionId = "atomic-generation-claim" as SessionId;
    const { batch } = await store.enqueueWork({
      sessionId,
      workClass: "turn_work",
      deliveryPolicy: "earliest_safe_boundary",
      slotPolicy: "exclusive",
      payload: "atomic generation claim",
    });
    const staleOwner = localOwner("stale", "not-the-current-process-start");
    const liveOwner = localOwner("live", "atomic-live-start");

    const staleOutcome = await store.tryClaimLease(sessionId, staleOwner, 60_000);
    if (staleOutcome.kind !== "acquired") throw new Error("stale owner lease is free");
    const staleLease = staleOutcome.lease;

    const validationEntered = gate();
    const releaseValidation = gate();
    store.setClaimAfterValidationHook(async () => {
      validationEntered.open();
      await releaseValidation.promise;
    });

    const staleClaimPromise = store.claimReadyWork(fenceOf(staleLease), "idle", 1);
    await validationEntered.promise;
    store.setClaimAfterValidationHook(undefined);

    let takeoverCompleted = false;
    const takeover = store
      .reclaimLease(sessionId, liveOwner, fenceOf(staleLease), 60_000)
      .finally(() => {
        takeoverCompleted = true;
      });
    // A window in which a takeover that did not wait would finish.
    await sleep(25);
    expect(takeoverCompleted, "takeover must wait for the validated claim mutation").toBe(false);

    releaseValidation.open();
    const staleClaim = await staleClaimPromise;
    expect(staleClaim?.batches[0]?.batchId).toBe(batch.batchId);

    const liveOutcome = await takeover;
    if (liveOutcome.kind !== "acquired") throw new Error("dead stale owner is reclaimable");
    const liveLease = liveOutcome.lease;
    expect(liveLease.fencingToken).toBeGreaterThan(staleLease.fencingToken);

    const liveClaim = await store.claimReadyWork(fenceOf(liveLease), "idle", 1);
    expect(liveClaim?.batches[0]?.batchId).toBe(batch.batchId);
    expect(liveClaim?.fencingToken).toBeGreaterThan(staleClaim?.fencingToken ?? Infinity);

    const error = await store
      .commit({
        sessionId,
        expectedHeadRevision: 1, // the batch created the session
        appendMessages: [],
        releaseLease: fenceOf(liveLease),
        completeQueueClaims: [queueClaimCompletion(staleClaim!)],
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isTetherError(error, "queued_work_claim_superseded")).toBe(true);
    // The refused commit changed nothing: the head the batch created, the successor still holds
    // lease and batch.
    expect((await store.loadSession(sessionId))?.headRevision).toBe(1);
    expect((await store.currentLease(sessionId))?.fencingToken).toBe(liveLease.fencingToken);
    const [retained] = await store.listWork(sessionId);
    expect(retained?.claimFencingToken).toBe(liveLease.fencingToken);
  });
});
