// Laws 5-8: fencing tokens only grow, re-entry is by owner and incarnation, renewal and release
// are fenced, and an expired lease (TTL 0 included) is anyone's.
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
  commitDraft,
  freshSessionId,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeLeaseLaws(factory: StoreFactory): void {
  describe("leases", () => {
    const harness = useStoreHarness(factory);

    test("law 5: a fresh acquisition after a release gets a strictly greater fencing token", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      expect(await store.releaseLease(fenceOf(first))).toEqual({ kind: "released" });
      const second = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
      expect(second.leaseToken).not.toBe(first.leaseToken);
    });

    test("law 5: a fresh acquisition after expiry gets a strictly greater fencing token", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const first = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      const outcome = await store.tryClaimLease(sid, opaqueOwner("b"), LONG_TTL_MS);
      const second = expectAcquired(outcome);
      expect(outcome).toMatchObject({ reentered: false });
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    });

    test("law 5: fencing tokens strictly increase over a chain of releases and expiries", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const tokens: number[] = [];
      const released = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      tokens.push(released.fencingToken);
      await store.releaseLease(fenceOf(released));
      const zeroTtl = await acquire(store, sid, opaqueOwner("b"), 0);
      tokens.push(zeroTtl.fencingToken);
      const short = await acquire(store, sid, opaqueOwner("c"), SHORT_TTL_MS);
      tokens.push(short.fencingToken);
      await advanceTime(PAST_SHORT_TTL_MS);
      const last = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      tokens.push(last.fencingToken);
      for (let i = 1; i < tokens.length; i++) {
        expect(tokens[i]).toBeGreaterThan(tokens[i - 1] ?? Infinity);
      }
    });

    test("law 5: the fencing generation survives deleting the session", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      await store.commit(
        commitDraft(sid, 0, { appendMessages: ["m1"], releaseLease: fenceOf(first) }),
      );
      expect(await store.deleteSession(sid)).toBe(true);
      expect(await store.loadSession(sid)).toBeUndefined();
      const second = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    });

    test("law 5: tokens follow the store's clock, so a store without the counter still issues greater ones", async () => {
      // ADR 0022: a replica promoted after a failover may never have received a session's last
      // claims, so its counter is behind the tokens handed out. A session never held stands for
      // that counter here (it has none at all); once the store's clock moved on, as it does in
      // any failover, its first token is still above every token issued before, including those
      // of a session claimed faster than the clock ticks.
      const { store, advanceTime } = harness();
      const often = freshSessionId();
      const issued: number[] = [];
      for (const name of ["a", "b", "c"]) {
        const lease = await acquire(store, often, opaqueOwner(name), LONG_TTL_MS);
        expect(await store.releaseLease(fenceOf(lease))).toEqual({ kind: "released" });
        issued.push(lease.fencingToken);
      }
      await advanceTime(50);
      const promoted = await acquire(store, freshSessionId(), opaqueOwner("d"), LONG_TTL_MS);
      expect(promoted.fencingToken).toBeGreaterThan(Math.max(...issued));
    });

    test("law 6: the same owner and incarnation re-enters with the same tokens", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const owner = opaqueOwner("a");
      const firstOutcome = await store.tryClaimLease(sid, owner, 1_000);
      expect(firstOutcome).toMatchObject({ kind: "acquired", reentered: false });
      const first = expectAcquired(firstOutcome);
      await advanceTime(50);
      const again = await store.tryClaimLease(sid, owner, 1_000);
      expect(again).toMatchObject({ kind: "acquired", reentered: true });
      const lease = expectAcquired(again);
      expectSameLease(lease, first);
      expect(lease.expiresAtMs).toBeGreaterThan(first.expiresAtMs);
    });

    test("law 6: a claim says whether the session was vacant (never held, or released)", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const owner = opaqueOwner("a");
      const first = await store.tryClaimLease(sid, owner, SHORT_TTL_MS);
      expect(first).toMatchObject({ kind: "acquired", vacant: true });
      // A re-entry, and a claim after the lease expired instead of being released, are not.
      expect(await store.tryClaimLease(sid, owner, SHORT_TTL_MS)).toMatchObject({
        reentered: true,
        vacant: false,
      });
      await advanceTime(PAST_SHORT_TTL_MS);
      const afterExpiry = await store.tryClaimLease(sid, opaqueOwner("b"), LONG_TTL_MS);
      expect(afterExpiry).toMatchObject({ kind: "acquired", reentered: false, vacant: false });
      await store.releaseLease(fenceOf(expectAcquired(afterExpiry)));
      expect(await store.tryClaimLease(sid, owner, LONG_TTL_MS)).toMatchObject({
        kind: "acquired",
        vacant: true,
      });
    });

    test("law 6: re-entry extends the lease past its original expiry", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const owner = opaqueOwner("a");
      const first = await acquire(store, sid, owner, 200);
      await advanceTime(120);
      expectAcquired(await store.tryClaimLease(sid, owner, 300));
      await advanceTime(150);
      // 270 ms after the first acquisition: past its 200 ms TTL, inside the re-entered 300 ms.
      const current = await store.currentLease(sid);
      expect(current).toBeDefined();
      expectSameLease(current!, first);
      expectBusy(await store.tryClaimLease(sid, opaqueOwner("b"), LONG_TTL_MS));
    });

    test("law 6: another owner gets busy with the current holder", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const holder = expectBusy(await store.tryClaimLease(sid, opaqueOwner("b"), LONG_TTL_MS));
      expectSameLease(holder, held);
      expect(holder.owner.ownerId).toBe("owner-a");
    });

    test("law 6: the same owner in another incarnation gets busy, not re-entry", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a", "inc-1"), LONG_TTL_MS);
      const outcome = await store.tryClaimLease(sid, opaqueOwner("a", "inc-2"), LONG_TTL_MS);
      const holder = expectBusy(outcome);
      expectSameLease(holder, held);
      expect(holder.owner.incarnationId).toBe("owner-a:inc-1");
    });

    test("law 7: renewal with the exact fence extends the lease and keeps its tokens", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), 1_000);
      const renewed = await store.renewLease(fenceOf(held), LONG_TTL_MS);
      expectSameLease(renewed, held);
      expect(renewed.expiresAtMs).toBeGreaterThan(held.expiresAtMs);
      const current = await store.currentLease(sid);
      expect(current?.expiresAtMs).toBe(renewed.expiresAtMs);
    });

    test("law 7: renewal with a wrong lease token is session_execution_lease_expired", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), 1_000);
      await expectTetherError(
        () => store.renewLease({ ...fenceOf(held), leaseToken: "forged-lease-token" }, LONG_TTL_MS),
        "session_execution_lease_expired",
      );
      const current = await store.currentLease(sid);
      expect(current?.expiresAtMs).toBe(held.expiresAtMs);
    });

    test("law 7: renewal with a wrong fencing token is session_execution_lease_expired", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), 1_000);
      await expectTetherError(
        () =>
          store.renewLease({ ...fenceOf(held), fencingToken: held.fencingToken + 1 }, LONG_TTL_MS),
        "session_execution_lease_expired",
      );
      const current = await store.currentLease(sid);
      expect(current?.expiresAtMs).toBe(held.expiresAtMs);
    });

    test("law 7: renewal after expiry or after release is session_execution_lease_expired", async () => {
      const { store, advanceTime } = harness();
      const expiredSid = freshSessionId();
      const expired = await acquire(store, expiredSid, opaqueOwner("a"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      await expectTetherError(
        () => store.renewLease(fenceOf(expired), LONG_TTL_MS),
        "session_execution_lease_expired",
      );
      expect(await store.currentLease(expiredSid)).toBeUndefined();

      const releasedSid = freshSessionId();
      const released = await acquire(store, releasedSid, opaqueOwner("a"), LONG_TTL_MS);
      await store.releaseLease(fenceOf(released));
      await expectTetherError(
        () => store.renewLease(fenceOf(released), LONG_TTL_MS),
        "session_execution_lease_expired",
      );
      expect(await store.currentLease(releasedSid)).toBeUndefined();
    });

    test("law 7: release is idempotent", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      expect(await store.releaseLease(fenceOf(held))).toEqual({ kind: "released" });
      expect(await store.releaseLease(fenceOf(held))).toEqual({ kind: "not_held" });
      expect(await store.currentLease(sid)).toBeUndefined();
    });

    test("law 7: a stale release after expiry never clears the newer holder's lease", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const stale = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      const newer = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      expect(await store.releaseLease(fenceOf(stale))).toEqual({ kind: "not_held" });
      const current = await store.currentLease(sid);
      expect(current).toBeDefined();
      expectSameLease(current!, newer);
    });

    test("law 7: an old generation's release never clears the same owner's newer lease", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const owner = opaqueOwner("a");
      const old = await acquire(store, sid, owner, LONG_TTL_MS);
      await store.releaseLease(fenceOf(old));
      const newer = await acquire(store, sid, owner, LONG_TTL_MS);
      expect(newer.fencingToken).toBeGreaterThan(old.fencingToken);
      expect(await store.releaseLease(fenceOf(old))).toEqual({ kind: "not_held" });
      const current = await store.currentLease(sid);
      expect(current).toBeDefined();
      expectSameLease(current!, newer);
    });

    test("law 7: a release with the right generation but a forged lease token is not_held", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const forged = { ...fenceOf(held), leaseToken: "forged-lease-token" };
      expect(await store.releaseLease(forged)).toEqual({ kind: "not_held" });
      const current = await store.currentLease(sid);
      expect(current).toBeDefined();
      expectSameLease(current!, held);
    });

    test("law 8: a TTL-0 lease expires at once and anyone claims it with a higher token", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const zero = await acquire(store, sid, opaqueOwner("a"), 0);
      expect(await store.currentLease(sid)).toBeUndefined();
      const outcome = await store.tryClaimLease(sid, opaqueOwner("b"), LONG_TTL_MS);
      expect(outcome).toMatchObject({ kind: "acquired", reentered: false });
      const next = expectAcquired(outcome);
      expect(next.fencingToken).toBeGreaterThan(zero.fencingToken);
      expect(next.owner.ownerId).toBe("owner-b");
    });

    test("law 8: the same owner re-acquiring its expired lease gets a new generation, not re-entry", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const owner = opaqueOwner("a");
      const first = await acquire(store, sid, owner, SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      const outcome = await store.tryClaimLease(sid, owner, LONG_TTL_MS);
      expect(outcome).toMatchObject({ kind: "acquired", reentered: false });
      const next = expectAcquired(outcome);
      expect(next.fencingToken).toBeGreaterThan(first.fencingToken);
      expect(next.leaseToken).not.toBe(first.leaseToken);
    });

    test("law 8: currentLease shows the live lease and nothing once it expired or was released", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      expect(await store.currentLease(sid)).toBeUndefined();
      const short = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      const seen = await store.currentLease(sid);
      expect(seen).toBeDefined();
      expectSameLease(seen!, short);
      expect(seen!.sessionId).toBe(sid);
      expect(seen!.expiresAtMs).toBe(short.expiresAtMs);
      await advanceTime(PAST_SHORT_TTL_MS);
      expect(await store.currentLease(sid)).toBeUndefined();
      const long = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      expectSameLease((await store.currentLease(sid))!, long);
      await store.releaseLease(fenceOf(long));
      expect(await store.currentLease(sid)).toBeUndefined();
    });

    test("law 6: a TTL-0 lease is expired at once: the next claim by anyone acquires", async () => {
      // The boundary is expiresAt <= now. One try only catches a `<` slip when both calls land in
      // the same millisecond of the store's clock: the memory store's manual clock always does,
      // and a real clock does within a few of these tries.
      const { store } = harness();
      for (let run = 0; run < 25; run++) {
        const sid = freshSessionId();
        const zero = await acquire(store, sid, opaqueOwner("a"), 0);
        expect(await store.currentLease(sid)).toBeUndefined();
        const next = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
        expect(next.fencingToken).toBeGreaterThan(zero.fencingToken);
      }
    });
  });
}
