// The replica's lease keeper renews every lease it holds with one store call per tick, tells a
// holder whose renewal was refused (and only that one), and stops its timer when nothing is held.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import { fenceOf, type LeaseFence } from "../../../../src/domain/lease.js";
import type { RuntimeStore } from "../../../../src/ports/runtime-store.js";
import { silentLogger } from "../../../../src/runtime/deps.js";
import { createLeaseKeeper } from "../../../../src/runtime/session/lease-keeper.js";
import { createMemoryStore } from "../../../../src/store/memory/memory-store.js";

const TTL_MS = 3_000;
const owner = { ownerId: "r", incarnationId: "r:1", liveness: { kind: "opaque" as const } };

async function held(store: RuntimeStore, id: string): Promise<LeaseFence> {
  const outcome = await store.tryClaimLease(id as SessionId, owner, TTL_MS);
  if (outcome.kind !== "acquired") throw new Error("busy");
  return fenceOf(outcome.lease);
}

/** Counts renewLeases calls and the fences each carried. */
function counting(store: RuntimeStore): { store: RuntimeStore; calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    store: {
      ...store,
      renewLeases: (fences, ttlMs) => {
        calls.push(fences.length);
        return store.renewLeases(fences, ttlMs);
      },
    },
  };
}

describe("lease keeper", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("renews every held lease in one call per third of the TTL, and stops when none is held", async () => {
    const { store, calls } = counting(createMemoryStore());
    const keeper = createLeaseKeeper({ store, leaseTtlMs: TTL_MS, logger: silentLogger });
    const lost = vi.fn();
    const a = await held(store, "keep-a");
    const b = await held(store, "keep-b");
    const stopA = keeper.keep(a, lost);
    const stopB = keeper.keep(b, lost);
    await vi.advanceTimersByTimeAsync(TTL_MS / 3);
    expect(calls).toEqual([2]);
    const renewed = await store.currentLease(a.sessionId);
    await vi.advanceTimersByTimeAsync(TTL_MS / 3);
    expect(calls).toEqual([2, 2]);
    expect((await store.currentLease(a.sessionId))?.expiresAtMs).toBeGreaterThan(
      renewed?.expiresAtMs ?? Infinity,
    );
    stopA();
    await vi.advanceTimersByTimeAsync(TTL_MS / 3);
    expect(calls).toEqual([2, 2, 1]);
    stopB();
    await vi.advanceTimersByTimeAsync(TTL_MS);
    expect(calls).toEqual([2, 2, 1]);
    expect(vi.getTimerCount()).toBe(0);
    expect(lost).not.toHaveBeenCalled();
  });

  it("a refused renewal is told to its holder alone; a failed call to every holder in it", async () => {
    const memory = createMemoryStore();
    let failing = false;
    const store: RuntimeStore = {
      ...memory,
      renewLeases: (fences, ttlMs) =>
        failing ? Promise.reject(new Error("partition")) : memory.renewLeases(fences, ttlMs),
    };
    const keeper = createLeaseKeeper({ store, leaseTtlMs: TTL_MS, logger: silentLogger });
    const a = await held(store, "lose-a");
    const b = await held(store, "lose-b");
    const lostA = vi.fn();
    const lostB = vi.fn();
    keeper.keep(a, lostA);
    keeper.keep(b, lostB);
    await store.releaseLease(a);
    await vi.advanceTimersByTimeAsync(TTL_MS / 3);
    expect(lostA).toHaveBeenCalledOnce();
    expect(lostA.mock.calls[0]?.[0]).toMatchObject({ code: "session_execution_lease_expired" });
    expect(lostB).not.toHaveBeenCalled();
    // A lost hold is no longer renewed; the next failure reaches only the holder still kept.
    failing = true;
    await vi.advanceTimersByTimeAsync(TTL_MS / 3);
    expect(lostA).toHaveBeenCalledOnce();
    expect(lostB).toHaveBeenCalledOnce();
    expect((lostB.mock.calls[0]?.[0] as Error).message).toBe("partition");
  });
});
