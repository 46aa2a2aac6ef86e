// A replica's Redis connections send one turn of the event loop's commands in one socket write
// (coalesceWrites, ADR 0004), and each command is still its own: answered, failed and falling
// back to EVAL on its own, in the order it was sent.
import type { Socket } from "node:net";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import { coalesceWrites, replicaConnectionOptions } from "../../../src/store/redis/connections.js";
import { createRedisEventLog } from "../../../src/store/redis/event-log.js";
import { startRedis } from "../../support/redis-harness.js";
import { freshNamespace } from "../../support/redis-store-factory.js";

/** Counts the socket's writes to the kernel: one per _write, one per _writev (a corked batch). */
function countWrites(redis: Redis): () => number {
  const socket = redis.stream as Socket & {
    _write: (...args: unknown[]) => void;
    _writev: ((...args: unknown[]) => void) | null;
  };
  let writes = 0;
  const write = socket._write.bind(socket);
  socket._write = (...args) => {
    writes++;
    write(...args);
  };
  const writev = socket._writev?.bind(socket);
  if (writev) {
    socket._writev = (...args) => {
      writes++;
      writev(...args);
    };
  }
  return () => writes;
}

let redis: Redis;

beforeAll(async () => {
  redis = new Redis(inject("redisUrl"), replicaConnectionOptions({ commandTimeoutMs: 5_000 }));
  coalesceWrites(redis);
  await redis.ping();
});

afterAll(async () => {
  await redis.quit();
});

describe("coalesced writes", () => {
  it("sends the commands of one event-loop turn in one socket write, each answered on its own", async () => {
    const key = freshNamespace("coalesced");
    const writes = countWrites(redis);
    const replies = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => redis.rpush(key, String(i))),
      // A refused command in the same write fails alone.
      redis.hget(key, "field").then(
        () => "answered",
        (error: unknown) => (error instanceof Error ? error.message.slice(0, 9) : "?"),
      ),
      redis.lrange(key, 0, -1),
    ]);
    expect(writes()).toBe(1);
    expect(replies.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(replies[20]).toBe("WRONGTYPE");
    expect(replies[21]).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    await redis.del(key);
  });

  it("runs a script Redis has forgotten (NOSCRIPT, then EVAL) among other commands of the same write", async () => {
    // A server of its own: SCRIPT FLUSH would make other files' connections fall back too.
    const server = await startRedis();
    const own = new Redis(
      server.port,
      "127.0.0.1",
      replicaConnectionOptions({ commandTimeoutMs: 5_000 }),
    );
    coalesceWrites(own);
    try {
      const log = createRedisEventLog({
        redis: own,
        namespace: freshNamespace("coalesced-noscript"),
      });
      const session = parseSessionId("coalesced-noscript");
      await log.append(session, [{ turnId: "t", event: { type: "text_delta", text: "one" } }]);
      await own.script("FLUSH");
      const [seqs, pong] = await Promise.all([
        log.append(session, [{ turnId: "t", event: { type: "text_delta", text: "two" } }]),
        own.ping(),
      ]);
      expect(seqs).toEqual([2]);
      expect(pong).toBe("PONG");
      const read = await log.read(session, 0, 10);
      expect(read.entries.map((e) => e.seq)).toEqual([1, 2]);
    } finally {
      own.disconnect();
      await server.stop();
    }
  });

  it("coalesces each cluster node's commands, which still follow their slots", async () => {
    const ports = inject("clusterPorts");
    const cluster = new Cluster(ports.map((port) => ({ host: "127.0.0.1", port })));
    coalesceWrites(cluster);
    try {
      await cluster.ping();
      const keys = Array.from({ length: 30 }, (_, i) => `${freshNamespace("slots")}-${i}`);
      await Promise.all(keys.map((k, i) => cluster.set(k, String(i))));
      expect(await Promise.all(keys.map((k) => cluster.get(k)))).toEqual(
        keys.map((_, i) => `${i}`),
      );
      await Promise.all(keys.map((k) => cluster.del(k)));
    } finally {
      cluster.disconnect();
    }
  });
});
