// The conformance suite against the Redis store in TETHER_REDIS_DURABILITY=replicated mode: on a
// primary with one replica, and on a 3-master Redis Cluster with one replica per master (WAIT
// then runs on the node that ran each script). WAIT behind acknowledgements changes no law,
// a commit's announcement (announcement-laws.ts, turn-end-laws.ts) included.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTetherError } from "../../src/domain/errors.js";
import { parseSessionId } from "../../src/domain/ids.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import type { Cluster } from "ioredis";
import { Redis } from "ioredis";
import type { RedisDurability } from "../../src/store/redis/durability.js";
import {
  startCluster,
  startRedis,
  waitForReplicasOnline,
  type RedisCluster,
  type RedisProcess,
} from "../support/redis-harness.js";
import { createRedisEventLog } from "../../src/store/redis/event-log.js";
import { coalesceWrites } from "../../src/store/redis/connections.js";
import {
  connectCluster,
  freshNamespace,
  raiseGeneration,
  redisStoreFactory,
} from "../support/redis-store-factory.js";
import { sleep, waitFor } from "../support/wait-for.js";
import { describeAnnouncementLaws } from "./announcement-laws.js";
import { defineStoreConformance } from "./define-store-conformance.js";
import type { EventLogFactory } from "./event-log-laws.js";
import { describeTurnEndLaws } from "./turn-end-laws.js";

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
  coalesceWrites(redis);
  clusterConn = connectCluster(cluster.ports);
  const conn = clusterConn;
  // The client learns the slots (and that half the nodes are replicas) before the first test.
  await waitFor(
    () =>
      conn.ping().then(
        () => conn.status === "ready",
        () => false,
      ),
    {
      timeoutMs: 20_000,
      what: "the cluster client to be ready",
    },
  );
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
    { readyIndexInSteps: true, outboxFolded: true, chargesInCommit: true },
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

/** A replicated store paired with its event log: the laws of a commit's announcement. */
function replicatedLogs(
  connection: () => Redis | Cluster | undefined,
  label: string,
): EventLogFactory {
  return () => {
    const conn = connection();
    if (!conn) throw new Error("no Redis connection");
    const namespace = freshNamespace(label);
    const store = createRedisStore({
      redis: conn,
      namespace,
      logMaxEntries: 100,
      durability: REPLICATED,
    });
    const log = createRedisEventLog({ redis: conn, namespace, maxEntries: 100 });
    return Promise.resolve({
      store,
      log,
      advanceTime: (ms) => sleep(ms + 2),
      clockBehindTokens: (sid, ms) => raiseGeneration(conn, namespace, sid, ms),
      close: async () => {
        await log.close();
        await store.close();
      },
    });
  };
}

describe("announcing commits, durability replicated (standalone with a replica)", () => {
  describeAnnouncementLaws(replicatedLogs(() => redis, "log-replicated"));
  describeTurnEndLaws(replicatedLogs(() => redis, "log-replicated"));
});

describe("announcing commits, durability replicated (cluster with a replica per master)", () => {
  describeAnnouncementLaws(replicatedLogs(() => clusterConn, "log-cluster-replicated"));
  describeTurnEndLaws(replicatedLogs(() => clusterConn, "log-cluster-replicated"));
});

/** The replica port of the master serving `key`'s slot, read from CLUSTER NODES. */
async function replicaServing(conn: Cluster, key: string): Promise<number> {
  const slot = Number(await conn.cluster("KEYSLOT", key));
  const lines = String(await conn.cluster("NODES"))
    .trim()
    .split("\n")
    .map((l) => l.split(" "));
  const master = lines.find(
    ([, , flags, , , , , , ...slots]) =>
      flags?.includes("master") &&
      slots.some((range) => {
        const [from, to] = range.split("-").map(Number);
        return slot >= (from ?? -1) && slot <= (to ?? from ?? -1);
      }),
  );
  const replica = lines.find((l) => l[3] === master?.[0]);
  return Number(/:(\d+)@/u.exec(replica?.[1] ?? "")?.[1]);
}

describe("WAIT on a cluster", () => {
  it("runs on the node that ran the script: stopping that master's replica alone fails the call", async () => {
    if (!clusterConn || !cluster) throw new Error("no cluster");
    const store = createRedisStore({
      redis: clusterConn,
      namespace: "wait-node",
      durability: { mode: "replicated", minReplicas: 1, timeoutMs: 300 },
    });
    const sid = parseSessionId("wait-node-session");
    const port = await replicaServing(clusterConn, `wait-node:{${sid}}:x`);
    const node = cluster.nodes[cluster.ports.indexOf(port)];
    if (!node) throw new Error(`no cluster node on ${port}`);
    const draft = {
      sessionId: sid,
      delivery: { kind: "next_turn" as const },
      payload: "p",
      sourceKey: "k",
    };
    node.child.kill("SIGSTOP");
    let refused: unknown;
    try {
      refused = await store.submitInput(draft).catch((e: unknown) => e);
    } finally {
      node.child.kill("SIGCONT");
    }
    // The other masters' replicas kept running: WAIT elsewhere would have counted one of them.
    expect(isTetherError(refused, "replication_unconfirmed")).toBe(true);
    expect((refused as { fields: unknown }).fields).toMatchObject({ required: 1, confirmed: 0 });
    await waitForReplicasOnline(cluster.ports, 1, 30_000);
    expect((await store.submitInput(draft)).deduplicated).toBe(true);
  });
});
