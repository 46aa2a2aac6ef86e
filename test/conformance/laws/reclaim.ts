// Law 9: reclaim takes over before TTL only from the observed, still-current holder that is
// provably dead for the claimant; anything it cannot prove dead stays busy.
import { describe, expect, test } from "vitest";
import { fenceOf } from "../../../src/domain/lease.js";
import {
  acquire,
  expectAcquired,
  expectBusy,
  expectSameLease,
  expectTetherError,
} from "../support/expectations.js";
import {
  claimantBesideThisProcess,
  deadLocalOwner,
  freshSessionId,
  liveLocalOwner,
  localClaimant,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeReclaimLaws(factory: StoreFactory): void {
  describe("reclaim", () => {
    const harness = useStoreHarness(factory);

    test("law 9: a provably dead holder is reclaimed before its TTL with a higher fencing token", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const dead = await acquire(store, sid, deadLocalOwner("dead"), LONG_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        localClaimant("claimant"),
        fenceOf(dead),
        LONG_TTL_MS,
      );
      expect(outcome).toMatchObject({ kind: "acquired", reentered: false, vacant: false });
      const taken = expectAcquired(outcome);
      expect(taken.owner.ownerId).toBe("owner-claimant");
      expect(taken.fencingToken).toBeGreaterThan(dead.fencingToken);
      expect(taken.leaseToken).not.toBe(dead.leaseToken);
      expectSameLease((await store.currentLease(sid))!, taken);
      await expectTetherError(
        () => store.renewLease(fenceOf(dead), LONG_TTL_MS),
        "session_execution_lease_expired",
      );
    });

    test("law 9: a live holder on the claimant's host and boot is busy", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const live = await acquire(store, sid, liveLocalOwner("live"), LONG_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        claimantBesideThisProcess("claimant"),
        fenceOf(live),
        LONG_TTL_MS,
      );
      expectSameLease(expectBusy(outcome), live);
      expectSameLease((await store.currentLease(sid))!, live);
    });

    test("law 9: a holder on another host is never provably dead", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, deadLocalOwner("dead", "other-host"), LONG_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        localClaimant("claimant"),
        fenceOf(held),
        LONG_TTL_MS,
      );
      expectSameLease(expectBusy(outcome), held);
    });

    test("law 9: a holder from another boot is never provably dead", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(
        store,
        sid,
        deadLocalOwner("dead", undefined, "other-boot"),
        LONG_TTL_MS,
      );
      const outcome = await store.reclaimLease(
        sid,
        localClaimant("claimant"),
        fenceOf(held),
        LONG_TTL_MS,
      );
      expectSameLease(expectBusy(outcome), held);
    });

    test("law 9: an opaque holder is never provably dead", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("opaque"), LONG_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        localClaimant("claimant"),
        fenceOf(held),
        LONG_TTL_MS,
      );
      expectSameLease(expectBusy(outcome), held);
    });

    test("law 9: an opaque claimant cannot prove a local-process holder dead", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, deadLocalOwner("dead"), LONG_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        opaqueOwner("claimant"),
        fenceOf(held),
        LONG_TTL_MS,
      );
      expectSameLease(expectBusy(outcome), held);
    });

    test("law 9: a reclaim naming a holder superseded by an earlier takeover is busy", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const dead = await acquire(store, sid, deadLocalOwner("dead"), LONG_TTL_MS);
      const first = expectAcquired(
        await store.reclaimLease(sid, localClaimant("first"), fenceOf(dead), LONG_TTL_MS),
      );
      const late = await store.reclaimLease(sid, localClaimant("late"), fenceOf(dead), LONG_TTL_MS);
      expectSameLease(expectBusy(late), first);
      expectSameLease((await store.currentLease(sid))!, first);
    });

    test("law 9: a reclaim naming an expired holder that was since replaced is busy", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const old = await acquire(store, sid, deadLocalOwner("old"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      const newer = await acquire(store, sid, opaqueOwner("newer"), LONG_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        localClaimant("claimant"),
        fenceOf(old),
        LONG_TTL_MS,
      );
      expectSameLease(expectBusy(outcome), newer);
    });

    test("law 9: a reclaim naming the holder with a forged lease token is busy", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const dead = await acquire(store, sid, deadLocalOwner("dead"), LONG_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        localClaimant("claimant"),
        { ...fenceOf(dead), leaseToken: "forged-lease-token" },
        LONG_TTL_MS,
      );
      expectSameLease(expectBusy(outcome), dead);
    });

    test("law 9: of two concurrent reclaims of one dead holder exactly one acquires", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const dead = await acquire(store, sid, deadLocalOwner("dead"), LONG_TTL_MS);
      const outcomes = await Promise.all([
        store.reclaimLease(sid, localClaimant("left"), fenceOf(dead), LONG_TTL_MS),
        store.reclaimLease(sid, localClaimant("right"), fenceOf(dead), LONG_TTL_MS),
      ]);
      const acquired = outcomes.filter((o) => o.kind === "acquired");
      const busy = outcomes.filter((o) => o.kind === "busy");
      expect(acquired).toHaveLength(1);
      expect(busy).toHaveLength(1);
      const winner = expectAcquired(acquired[0]!);
      expect(winner.fencingToken).toBeGreaterThan(dead.fencingToken);
      expectSameLease(expectBusy(busy[0]!), winner);
      expectSameLease((await store.currentLease(sid))!, winner);
    });

    test("law 9: reclaiming an expired lease acquires it with a higher token", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const expired = await acquire(store, sid, opaqueOwner("opaque"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      const outcome = await store.reclaimLease(
        sid,
        opaqueOwner("claimant"),
        fenceOf(expired),
        LONG_TTL_MS,
      );
      const taken = expectAcquired(outcome);
      expect(taken.owner.ownerId).toBe("owner-claimant");
      expect(taken.fencingToken).toBeGreaterThan(expired.fencingToken);
    });

    test("law 9: reclaiming a released lease acquires it with a higher token", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const released = await acquire(store, sid, opaqueOwner("gone"), LONG_TTL_MS);
      await store.releaseLease(fenceOf(released));
      const taken = expectAcquired(
        await store.reclaimLease(sid, opaqueOwner("claimant"), fenceOf(released), LONG_TTL_MS),
      );
      expect(taken.fencingToken).toBeGreaterThan(released.fencingToken);
      expect(taken.owner.ownerId).toBe("owner-claimant");
    });
  });
}
