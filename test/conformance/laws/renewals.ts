// renewLeases: a replica renews every lease it holds in one call. Each fence is judged as
// renewLease judges it, alone: the live lease named exactly by its fence is extended and keeps
// its tokens; a stale fence (another token, another generation, expired, released) renews
// nothing, and the other fences of the same call are renewed all the same. Every law runs on
// memory, Redis, Redis Cluster and the wire.
import { describe, expect, test } from "vitest";
import { fenceOf, MAX_RENEWALS_PER_CALL } from "../../../src/domain/lease.js";
import { acquire, expectTetherError, violationFields } from "../support/expectations.js";
import {
  freshSessionId,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeRenewalLaws(factory: StoreFactory): void {
  describe("renewing many leases", () => {
    const harness = useStoreHarness(factory);

    test("every live lease named is extended, keeps its tokens, and outcomes keep the order", async () => {
      const { store } = harness();
      const held = await Promise.all(
        [0, 1, 2].map(() => acquire(store, freshSessionId(), opaqueOwner("a"), 1_000)),
      );
      const renewals = await store.renewLeases(held.map(fenceOf), LONG_TTL_MS);
      expect(renewals.map((r) => r.kind)).toEqual(["renewed", "renewed", "renewed"]);
      for (const [i, lease] of held.entries()) {
        const renewal = renewals[i];
        if (renewal?.kind !== "renewed") throw new Error("not renewed");
        expect(renewal.expiresAtMs).toBeGreaterThan(lease.expiresAtMs);
        const current = await store.currentLease(lease.sessionId);
        expect(current?.expiresAtMs).toBe(renewal.expiresAtMs);
        expect(current?.leaseToken).toBe(lease.leaseToken);
        expect(current?.fencingToken).toBe(lease.fencingToken);
      }
    });

    test("a stale fence renews nothing and leaves the others of the call renewed", async () => {
      const { store, advanceTime } = harness();
      const live = await acquire(store, freshSessionId(), opaqueOwner("a"), LONG_TTL_MS);
      const forged = await acquire(store, freshSessionId(), opaqueOwner("a"), LONG_TTL_MS);
      const older = await acquire(store, freshSessionId(), opaqueOwner("a"), LONG_TTL_MS);
      const released = await acquire(store, freshSessionId(), opaqueOwner("a"), LONG_TTL_MS);
      await store.releaseLease(fenceOf(released));
      const expired = await acquire(store, freshSessionId(), opaqueOwner("a"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      // Taken over after expiry: the old holder's fence names the generation before.
      const successor = await acquire(store, expired.sessionId, opaqueOwner("b"), LONG_TTL_MS);

      const renewals = await store.renewLeases(
        [
          { ...fenceOf(forged), leaseToken: "forged-lease-token" },
          fenceOf(live),
          { ...fenceOf(older), fencingToken: older.fencingToken + 1 },
          fenceOf(released),
          fenceOf(expired),
        ],
        LONG_TTL_MS,
      );
      expect(renewals.map((r) => r.kind)).toEqual([
        "expired",
        "renewed",
        "expired",
        "expired",
        "expired",
      ]);
      expect((await store.currentLease(forged.sessionId))?.expiresAtMs).toBe(forged.expiresAtMs);
      expect((await store.currentLease(older.sessionId))?.expiresAtMs).toBe(older.expiresAtMs);
      expect(await store.currentLease(released.sessionId)).toBeUndefined();
      const current = await store.currentLease(expired.sessionId);
      expect(current?.fencingToken).toBe(successor.fencingToken);
      expect(current?.expiresAtMs).toBe(successor.expiresAtMs);
    });

    test("a lease named twice is renewed twice; an empty call renews nothing", async () => {
      const { store } = harness();
      const held = await acquire(store, freshSessionId(), opaqueOwner("a"), 1_000);
      const renewals = await store.renewLeases([fenceOf(held), fenceOf(held)], LONG_TTL_MS);
      expect(renewals.map((r) => r.kind)).toEqual(["renewed", "renewed"]);
      expect(await store.renewLeases([], LONG_TTL_MS)).toEqual([]);
    });

    test("bad input: a bad ttl, a bad fence or too many fences is invalid_argument naming it", async () => {
      const { store } = harness();
      const held = await acquire(store, freshSessionId(), opaqueOwner("a"), 1_000);
      const ttlError = await expectTetherError(
        () => store.renewLeases([fenceOf(held)], -5),
        "invalid_argument",
      );
      expect(violationFields(ttlError)).toContain("ttl_ms");
      const fenceError = await expectTetherError(
        () => store.renewLeases([fenceOf(held), { ...fenceOf(held), leaseToken: "" }], 1_000),
        "invalid_argument",
      );
      expect(violationFields(fenceError)).toContain("fences[1].lease_token");
      const many = Array.from({ length: MAX_RENEWALS_PER_CALL + 1 }, () => fenceOf(held));
      const sizeError = await expectTetherError(
        () => store.renewLeases(many, 1_000),
        "invalid_argument",
      );
      expect(violationFields(sizeError)).toContain("fences");
      // Nothing was renewed by the refused calls.
      expect((await store.currentLease(held.sessionId))?.expiresAtMs).toBe(held.expiresAtMs);
    });
  });
}
