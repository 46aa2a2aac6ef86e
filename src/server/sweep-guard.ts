// The sweep's singleton guard on Redis: a redlock lock, held for one sweep. Efficiency only —
// if two replicas sweep at once, each offer is still decided by the lease (DESIGN.md section 7).
import type { Cluster, Redis } from "ioredis";
import Redlock from "redlock";
import type { SingletonGuard } from "../runtime/index.js";

const LOCK_MS = 30_000;

export function createRedlockGuard(redis: Redis | Cluster, resource: string): SingletonGuard {
  const redlock = new Redlock([redis], { retryCount: 0 });
  return async (task) => {
    let lock;
    try {
      lock = await redlock.acquire([resource], LOCK_MS);
    } catch {
      return false; // another replica is sweeping
    }
    try {
      await task();
      return true;
    } finally {
      await lock.release().catch(() => undefined);
    }
  };
}
