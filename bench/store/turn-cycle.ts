// One turn cycle against the store: claim the lease and enqueue one batch (issued together, as a
// producer and a worker would), claim the batch, then commit completing the claim and releasing
// the lease.
import type { SessionId } from "../../src/domain/ids.js";
import { fenceOf, type LeaseOwner } from "../../src/domain/lease.js";
import { queueClaimCompletion } from "../../src/domain/queue.js";
import type { RuntimeStore } from "../../src/ports/runtime-store.js";

export const BENCH_OWNER: LeaseOwner = {
  ownerId: "bench-worker",
  incarnationId: "bench-worker:1",
  liveness: { kind: "opaque" },
};

export async function turnCycle(store: RuntimeStore, sessionId: SessionId): Promise<void> {
  const [outcome] = await Promise.all([
    store.tryClaimLease(sessionId, BENCH_OWNER, 30_000),
    store.enqueueWork({
      sessionId,
      workClass: "turn_work",
      deliveryPolicy: "earliest_safe_boundary",
      slotPolicy: "exclusive",
      payload: '{"wake":"bench"}',
    }),
  ]);
  if (outcome.kind !== "acquired") throw new Error(`session ${sessionId} is busy`);
  const fence = fenceOf(outcome.lease);
  const claim = await store.claimReadyWork(fence, "idle", 1);
  if (!claim) throw new Error(`session ${sessionId}: nothing to claim`);
  // The batch created the session (ADR 0003), as CreateSession would have: revision 1.
  const head = 1;
  await store.commit({
    sessionId,
    expectedHeadRevision: head,
    appendMessages: ['{"role":"assistant","text":"ok"}'],
    advanceTurn: true,
    releaseLease: fence,
    completeQueueClaims: [queueClaimCompletion(claim)],
  });
}
