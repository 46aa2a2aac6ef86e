// The conformance suite against the Redis store in TETHER_REDIS_DURABILITY=replicated mode: on a
// primary with one replica, and on a 3-master Redis Cluster with one replica per master (WAIT
// then runs on the node that ran each script). WAIT behind acknowledgements changes no law.
import { afterAll, beforeAll, describe } from "vitest";
import { Cluster, Redis } from "ioredis";
import type { RedisDurability } from "../../src/store/redis/durability.js";
import {
  startCluster,
  startRedis,
  waitForReplicasOnline,
  type RedisCluster,
  type RedisProcess,
} from "../support/redis-harness.js";
import { connectCluster, redisStoreFactory } from "../support/redis-store-factory.js";
import { defineStoreConformance } from "./define-store-conformance.js";

const REPLICATED: RedisDurability = { mode: "replicated", minReplicas: 1, timeoutMs: 2_000 };
let processes: RedisProcess[] = [];
let cluster: RedisCluster | undefined;
let redis: Redis | undefined;
let clusterConn: Cluster | undefined;

beforeAll(async () => {
  const primary = await startRedis(["--repl-diskless-sync-delay", "0"]);
  const replica = await startRedis(["--replicaof", "127.0.0.1", String(primary.port)]);
  processes = [primary, replica];
  cluster = await startCluster(3, 1);
  await waitForReplicasOnline([primary.port, ...cluster.ports], 1, 30_000);
  redis = new Redis({ host: "127.0.0.1", port: primary.port, maxRetriesPerRequest: 2 });
  clusterConn = connectCluster(cluster.ports);
}, 60_000);

afterAll(async () => {
  await redis?.quit();
  await clusterConn?.quit();
  await cluster?.stop();
  await Promise.all(processes.map((p) => p.stop()));
});

describe("redis store conformance (standalone with a replica, durability replicated)", () => {
  defineStoreConformance(
    redisStoreFactory(
      () => {
        if (!redis) throw new Error("no Redis connection");
        return redis;
      },
      "replicated",
      1,
      REPLICATED,
    ),
  );
});

describe("redis store conformance (cluster with a replica per master, durability replicated)", () => {
  defineStoreConformance(
    redisStoreFactory(
      () => {
        if (!clusterConn) throw new Error("no cluster connection");
        return clusterConn;
      },
      "cluster-replicated",
      0,
      REPLICATED,
    ),
  );
});
