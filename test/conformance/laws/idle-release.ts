// releaseIfIdle: the release a holder makes when it runs out of claims, in one step with a look
// for anything that still waits for a holder. While something waits the lease stays (`pending`),
// so nothing submitted before the release is left without a holder; a stale fence changes
// nothing. Every law runs on memory, Redis, Redis Cluster and the wire.
import { describe, expect, test } from "vitest";
import { inputClaimCompletion } from "../../../src/domain/inputs.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { queueClaimCompletion } from "../../../src/domain/queue.js";
import { acquire } from "../support/expectations.js";
import {
  activeTurn,
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
  workDraft,
  waitingTurn,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeIdleReleaseLaws(factory: StoreFactory): void {
  describe("release if idle", () => {
    const harness = useStoreHarness(factory);

    test("a session with nothing waiting is released", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "released" });
      expect(await store.currentLease(sid)).toBeUndefined();
      // Idempotent like releaseLease: the fence no longer holds anything.
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "not_held" });
    });

    test("an input to run next keeps the lease; once its turn commits, the release goes through", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "next"));
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "pending" });
      expect((await store.currentLease(sid))?.fencingToken).toBe(fence.fencingToken);
      // Claimed and not settled still waits (the claimant may be gone).
      const claim = await store.claimInputs(fence, { kind: "idle" }, 8);
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "pending" });
      await store.commit(
        commitDraft(sid, 1, {
          appendMessages: ["turn"],
          completeInputClaims: claim ? [inputClaimCompletion(claim)] : [],
        }),
      );
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "released" });
    });

    test("input for a running turn does not keep the lease; queued work does", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "steer", activeTurn("t-1", "after_work")));
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      // A steer for a turn that is not running is not something an idle holder runs.
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "released" });
      const again = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await store.enqueueWork(workDraft(sid, "work"));
      expect(await store.releaseIfIdle(again)).toEqual({ kind: "pending" });
      const work = await store.claimReadyWork(again, "idle", 8);
      expect(await store.releaseIfIdle(again)).toEqual({ kind: "pending" });
      await store.commit(
        commitDraft(sid, 1, { completeQueueClaims: work ? [queueClaimCompletion(work)] : [] }),
      );
      expect(await store.releaseIfIdle(again)).toEqual({ kind: "released" });
    });

    test("a parked turn keeps the lease", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const parking = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await store.parkTurn(parking, waitingTurn("t-parked"));
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS));
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "pending" });
    });

    test("on an idle session, a forged lease token with the live generation is not_held and the lease stays", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const lease = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const forged = { ...fenceOf(lease), leaseToken: `${lease.leaseToken}-forged` };
      expect(await store.releaseIfIdle(forged)).toEqual({ kind: "not_held" });
      expect(await store.currentLease(sid)).toMatchObject({
        leaseToken: lease.leaseToken,
        fencingToken: lease.fencingToken,
        expiresAtMs: lease.expiresAtMs,
      });
    });

    test("a stale fence changes nothing, pending or not", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const old = fenceOf(await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS));
      await advanceTime(PAST_SHORT_TTL_MS);
      const current = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      expect(await store.releaseIfIdle(old)).toEqual({ kind: "not_held" });
      expect((await store.currentLease(sid))?.fencingToken).toBe(current.fencingToken);
    });
  });
}
