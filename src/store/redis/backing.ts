// Which server and namespace a Redis-backed port keeps its keys on, so the store can tell whether
// its commit step reaches a quota or spend port's counters (RuntimeStore.chargesInCommit, ADR
// 0038). The same connection object and namespace: the keys are on the same server; a port built
// on another connection (or not on Redis) is never assumed to be, and keeps its own steps.
import type { Cluster, Redis } from "ioredis";
import type { TenantLimitPorts } from "../../ports/runtime-store.js";

interface Backing {
  redis: Redis | Cluster;
  namespace: string;
}

const backings = new WeakMap<object, Backing>();

/** Records where `port` keeps its keys; returns the port. */
export function tagBacking<T extends object>(
  port: T,
  redis: Redis | Cluster,
  namespace: string,
): T {
  backings.set(port, { redis, namespace });
  return port;
}

const isCluster = (redis: Redis | Cluster): boolean => "isCluster" in redis && redis.isCluster;

/**
 * Whether a commit on `redis` under `namespace` may touch the keys of `ports` in its step: not
 * on Cluster (a tenant's keys hash to the tenant's slot, not the session's), and every port
 * given is tagged with this connection and namespace. No port at all: nothing to carry.
 */
export function reachesInStep(
  redis: Redis | Cluster,
  namespace: string,
  ports: TenantLimitPorts,
): boolean {
  if (isCluster(redis)) return false;
  const given = [ports.quotas, ports.spend].filter((p) => p !== undefined);
  if (given.length === 0) return false;
  return given.every((port) => {
    const backing = backings.get(port);
    return backing?.redis === redis && backing.namespace === namespace;
  });
}
