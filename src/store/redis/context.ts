// What every operation module of the Redis store shares: the script runner, key builders,
// limits and the liveness probe.
import type { Cluster, Redis } from "ioredis";
import type { SessionId } from "../../domain/ids.js";
import type { LivenessProbe } from "../../ports/liveness-probe.js";
import type { StoreLimits } from "../../ports/runtime-store.js";
import { sessionIndexKey, sessionKeys, type SessionKeys } from "./keys.js";
import type { ScriptRunner } from "./scripts.js";

export interface RedisContext {
  redis: Redis | Cluster;
  scripts: ScriptRunner;
  limits: StoreLimits;
  probe: LivenessProbe;
  keys(sessionId: SessionId): SessionKeys;
  indexKey: string;
}

export function createRedisContext(
  redis: Redis | Cluster,
  scripts: ScriptRunner,
  namespace: string,
  limits: StoreLimits,
  probe: LivenessProbe,
): RedisContext {
  return {
    redis,
    scripts,
    limits,
    probe,
    keys: (sessionId) => sessionKeys(namespace, sessionId),
    indexKey: sessionIndexKey(namespace),
  };
}
