// Ready hints on Redis: one sorted set (scored by the time each is due) in its own slot, kept by
// plain commands outside the session scripts. A hint, never the truth (ADR 0002).
import type { Cluster, Redis } from "ioredis";
import type { SessionId } from "../../domain/ids.js";
import type { ReadyIndex } from "../../ports/ready-index.js";
import { readyIndexKey } from "./keys.js";
import { withStoreErrors as guarded } from "./connections.js";

export function createRedisReadyIndex(options: {
  redis: Redis | Cluster;
  namespace?: string;
}): ReadyIndex {
  const { redis } = options;
  const key = readyIndexKey(options.namespace ?? "tether");
  return {
    markReady: (sessionId) =>
      guarded(async () => {
        // LT keeps the earliest mark, so the sweep serves the longest-waiting sessions first
        // and a ready mark pulls a parked session's later wake-up forward.
        await redis.zadd(key, "LT", Date.now(), sessionId);
      }),
    wakeAt: (sessionId, atMs) =>
      guarded(async () => {
        await redis.zadd(key, atMs, sessionId);
      }),
    markIdle: (sessionId) =>
      guarded(async () => {
        await redis.zrem(key, sessionId);
      }),
    size: () => guarded(() => redis.zcard(key)),
    listReady: (limit) =>
      guarded(
        async () =>
          (await redis.zrangebyscore(key, "-inf", Date.now(), "LIMIT", 0, limit)) as SessionId[],
      ),
  };
}
