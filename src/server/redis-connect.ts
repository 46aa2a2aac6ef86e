// Opens the replica's Redis connection for the configured topology: a standalone URL, a Cluster,
// or a primary found through Sentinel (ADR 0017). Every connection the store, log and signals
// open later duplicates this one, so all of them follow the same topology and failovers.
import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { StoreConfig } from "./config.js";
import { redactUrl } from "./logger.js";
import { coalesceWrites, reconnectOnReadonly } from "../store/redis/connections.js";

type RedisStoreConfig = Extract<StoreConfig, { kind: "redis" }>;

export function connectRedis(config: RedisStoreConfig, common: RedisOptions): Redis | Cluster {
  const redis = openRedis(config, common);
  coalesceWrites(redis);
  return redis;
}

function openRedis(config: RedisStoreConfig, common: RedisOptions): Redis | Cluster {
  if (config.clusterNodes.length > 0) {
    return new Cluster(config.clusterNodes, { redisOptions: common });
  }
  if (config.sentinel !== undefined) {
    return new Redis({
      ...common,
      sentinels: config.sentinel.sentinels,
      name: config.sentinel.masterName,
      role: "master",
      ...(config.sentinel.sentinelPassword === undefined
        ? {}
        : { sentinelPassword: config.sentinel.sentinelPassword }),
      // Sentinel announces +switch-master; ioredis then drops the old primary at once instead of
      // waiting for a write to be refused (READONLY) or a connection to time out.
      failoverDetector: true,
      reconnectOnError: reconnectOnReadonly,
      // Between a primary's loss and its replacement Sentinel may name no primary: keep asking.
      sentinelRetryStrategy: (attempt: number) => Math.min(100 * attempt, 1_000),
    });
  }
  return new Redis(config.url ?? "", common);
}

/** What the start log says about where the store lives (no secrets). */
export function describeRedis(config: RedisStoreConfig): Record<string, unknown> {
  if (config.clusterNodes.length > 0) return { store: "redis-cluster", nodes: config.clusterNodes };
  if (config.sentinel !== undefined) {
    return {
      store: "redis-sentinel",
      sentinels: config.sentinel.sentinels,
      master: config.sentinel.masterName,
      durability: config.durability.mode,
    };
  }
  return { store: "redis", url: redactUrl(config.url ?? ""), durability: config.durability.mode };
}
