// The sweep's singleton guard on Redis: a redlock lock, held for one sweep. Efficiency only —
// if two replicas sweep at once, each offer is still decided by the lease (DESIGN.md section 7).
import type { Cluster, Redis } from "ioredis";
import Redlock from "redlock";
import type { SingletonGuard } from "../runtime/index.js";

/**
 * The lock's lifetime, extended by redlock while a sweep runs. Short, because a replica killed
 * mid-sweep keeps it until it expires and no replica sweeps meanwhile: with 30 s, a killed
 * sweeper's sessions waited 30 s to be taken over, far past a lease TTL and a sweep interval.
 */
export const SWEEP_LOCK_MS = 2_000;

export function createRedlockGuard(
  redis: Redis | Cluster,
  resource: string,
  lockMs = SWEEP_LOCK_MS,
): SingletonGuard {
  // Extended when a third of its life is left; retryCount 0: a held lock means "not this one".
  const redlock = new Redlock([redis], {
    retryCount: 0,
    automaticExtensionThreshold: Math.floor(lockMs / 3),
  });
  return async (task) => {
    let ran = false;
    let failure: { error: unknown } | undefined;
    try {
      await redlock.using([resource], lockMs, async () => {
        ran = true;
        await task().catch((error: unknown) => (failure = { error }));
      });
    } catch {
      // Not acquired (another replica sweeps, or Redis did not answer), or the release failed
      // after the sweep ran (the lock then expires by itself).
    }
    if (failure) throw failure.error;
    return ran;
  };
}
