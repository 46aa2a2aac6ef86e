// Redis store harnesses for tests: one connection per test file (standalone or cluster), and a
// fresh namespace per harness so tests sharing a server never see each other's keys.
import { randomUUID } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { afterAll, inject } from "vitest";
import type { StoreLimits } from "../../src/ports/runtime-store.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import { coalesceWrites } from "../../src/store/redis/connections.js";
import type { RedisDurability } from "../../src/store/redis/durability.js";
import { createRedisQuotaStore } from "../../src/store/redis/quota-ops.js";
import { createRedisIdempotencyKeyStore } from "../../src/store/redis/idempotency-key-ops.js";
import { createRedisStorageQuotaStore } from "../../src/store/redis/storage-quota-ops.js";
import { createRedisReadyIndex } from "../../src/store/redis/ready-index.js";
import { createRedisScheduleStore } from "../../src/store/redis/schedule-ops.js";
import { createRedisWebhookStore } from "../../src/store/redis/webhook-ops.js";
import type { SessionId } from "../../src/domain/ids.js";
import { sessionKeys } from "../../src/store/redis/keys.js";
import type { StoreFactory } from "../conformance/support/store-factory.js";
import { sleep } from "./wait-for.js";

// The tests' connections coalesce their writes as the server's do (connectRedis), so the laws
// hold for commands that leave in one socket write.
export function connectStandalone(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  coalesceWrites(redis);
  return redis;
}

export function connectCluster(ports: readonly number[]): Cluster {
  const cluster = new Cluster(
    ports.map((port) => ({ host: "127.0.0.1", port })),
    { redisOptions: { maxRetriesPerRequest: 2 } },
  );
  coalesceWrites(cluster);
  return cluster;
}

/**
 * The suite's standalone server and cluster, a connection to each for the test file that calls
 * this at its top level, closed after the file's tests.
 */
export function connectBothForFile(): { redis: Redis; cluster: Cluster } {
  const redis = new Redis(inject("redisUrl"));
  coalesceWrites(redis);
  const cluster = connectCluster(inject("clusterPorts"));
  afterAll(() => {
    redis.disconnect();
    cluster.disconnect();
  });
  return { redis, cluster };
}

export function freshNamespace(label: string): string {
  return `test-${label}-${randomUUID()}`;
}

/**
 * The conformance hook `clockBehindTokens` on Redis: the server's clock cannot be set back, so
 * the session's generation counter goes `ms` ahead of it (what a server whose clock lags the one
 * that issued the last token finds after a failover).
 */
export async function raiseGeneration(
  conn: Redis | Cluster,
  namespace: string,
  sessionId: SessionId,
  ms: number,
): Promise<void> {
  const key = sessionKeys(namespace, sessionId).generation;
  const [seconds, micros] = (await conn.time()) as [number | string, number | string];
  const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const last = Number((await conn.get(key)) ?? 0);
  await conn.set(key, String(Math.max(last, nowMs) + ms));
}

/**
 * A factory over a connection the test file owns. The Redis backend reads the server clock, so
 * advancing time is a real sleep (with a small margin for timer granularity).
 */
export function redisStoreFactory(
  connection: () => Redis | Cluster,
  label: string,
  extraConnections = 0,
  durability?: RedisDurability,
): StoreFactory {
  return async (options?: { limits?: Partial<StoreLimits> }) => {
    const namespace = freshNamespace(label);
    const store = createRedisStore({
      redis: connection(),
      namespace,
      extraConnections,
      ...(durability && { durability }),
      ...(options?.limits ? { limits: options.limits } : {}),
    });
    return {
      store,
      quotas: createRedisQuotaStore({ redis: connection(), namespace }),
      storageQuotas: createRedisStorageQuotaStore({ redis: connection(), namespace }),
      idempotencyKeys: createRedisIdempotencyKeyStore({
        redis: connection(),
        namespace,
        ...(durability && { durability }),
      }),
      schedules: createRedisScheduleStore({ redis: connection(), namespace }),
      webhooks: createRedisWebhookStore({ redis: connection(), namespace }),
      attachSteerNotices: (notice) => store.attachSteerNotices(notice),
      ready: createRedisReadyIndex({ redis: connection(), namespace }),
      advanceTime: (ms) => sleep(ms + 2),
      clockBehindTokens: (sid, ms) => raiseGeneration(connection(), namespace, sid, ms),
      close: () => store.close(),
    };
  };
}
