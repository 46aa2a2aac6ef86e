// The event log's fence laws, a commit's announcement (announcement-laws.ts) and a turn's end as
// the client sees it (turn-end-laws.ts), on each event-log backend, each log paired with the store whose
// leases it checks: memory (manual clock), Redis standalone and Redis Cluster (the lease and the
// stream share the session's hash tag, so the check is one script in one slot).
import { afterAll, beforeAll, describe, inject } from "vitest";
import type { Cluster, Redis } from "ioredis";
import { createManualClock } from "../../src/ports/clock.js";
import { createMemoryEventLog } from "../../src/store/memory/event-log.js";
import { createMemoryStore } from "../../src/store/memory/memory-store.js";
import { createRedisEventLog } from "../../src/store/redis/event-log.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import { createProcLivenessProbe } from "../../src/store/shared/local-process.js";
import {
  connectCluster,
  connectStandalone,
  freshNamespace,
  raiseGeneration,
} from "../support/redis-store-factory.js";
import { describeAnnouncementLaws } from "./announcement-laws.js";
import { describeEventLogFenceLaws, type EventLogFactory } from "./event-log-laws.js";
import { describeTurnEndLaws } from "./turn-end-laws.js";
import { sleep } from "../support/wait-for.js";

let redis: Redis | undefined;
let cluster: Cluster | undefined;

beforeAll(() => {
  redis = connectStandalone(inject("redisUrl"));
  cluster = connectCluster(inject("clusterPorts"));
});

afterAll(async () => {
  await redis?.quit();
  await cluster?.quit();
});

const memoryLogs: EventLogFactory = () => {
  const clock = createManualClock();
  const store = createMemoryStore({ clock, livenessProbe: createProcLivenessProbe() });
  const log = createMemoryEventLog({ fences: store });
  store.attachEventLog(log);
  return Promise.resolve({
    store,
    log,
    advanceTime: (ms) => {
      clock.advance(ms);
      return Promise.resolve();
    },
    clockBehindTokens: (_sid, ms) => {
      clock.set(clock.nowMs() - ms);
      return Promise.resolve();
    },
    close: async () => {
      await log.close();
      await store.close();
    },
  });
};

function redisLogs(connection: () => Redis | Cluster | undefined, label: string): EventLogFactory {
  return () => {
    const conn = connection();
    if (!conn) throw new Error("no Redis connection");
    const namespace = freshNamespace(label);
    const store = createRedisStore({ redis: conn, namespace, logMaxEntries: 100 });
    const log = createRedisEventLog({ redis: conn, namespace, maxEntries: 100 });
    return Promise.resolve({
      store,
      log,
      // The Redis log reads the server's clock: time passes for real.
      advanceTime: (ms) => sleep(ms + 2),
      clockBehindTokens: (sid, ms) => raiseGeneration(conn, namespace, sid, ms),
      close: async () => {
        await log.close();
        await store.close();
      },
    });
  };
}

describe("memory event log", () => {
  describeEventLogFenceLaws(memoryLogs);
  describeAnnouncementLaws(memoryLogs);
  describeTurnEndLaws(memoryLogs);
});

describe("redis event log (standalone)", () => {
  describeEventLogFenceLaws(redisLogs(() => redis, "log-standalone"));
  describeAnnouncementLaws(redisLogs(() => redis, "log-standalone"));
  describeTurnEndLaws(redisLogs(() => redis, "log-standalone"));
});

describe("redis event log (cluster)", () => {
  describeEventLogFenceLaws(redisLogs(() => cluster, "log-cluster"));
  describeAnnouncementLaws(redisLogs(() => cluster, "log-cluster"));
  describeTurnEndLaws(redisLogs(() => cluster, "log-cluster"));
});
