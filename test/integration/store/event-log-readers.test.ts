// Blocking reads of the Redis event log share a bounded set of connections (ADR 0028): many
// sessions watched at once cost the replica a few Redis clients, not one each, and every waiter
// still receives what arrives for it, on a standalone server and on a cluster.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import type { SessionEvent } from "../../../src/domain/session-events.js";
import type { EventLog, LogEntry } from "../../../src/ports/event-log.js";
import { createRedisEventLog } from "../../../src/store/redis/event-log.js";
import { createLogReaders } from "../../../src/store/redis/log-readers.js";
import { connectBothForFile, freshNamespace } from "../../support/redis-store-factory.js";
import { blockedReads, newBlockedRead, xreadsRun } from "../../support/blocked-reads.js";
import { startRedis, type RedisProcess } from "../../support/redis-harness.js";
import { waitFor } from "../../support/wait-for.js";

const { cluster } = connectBothForFile();

const delta = (text: string): { turnId: string; event: SessionEvent } => ({
  turnId: "t",
  event: { type: "text_delta", text },
});
const textOf = (entries: LogEntry[] | undefined): string | undefined => {
  const event = entries?.[0]?.event;
  return event?.type === "text_delta" ? event.text : undefined;
};

/** Clients the server holds now, as CLIENT LIST counts them (this test's own included). */
async function clientCount(conn: Redis): Promise<number> {
  const list = (await conn.client("LIST")) as string;
  return list.split("\n").filter((line) => line.trim() !== "").length;
}

/**
 * `count` sessions each awaited by one blocking read, then one append to each once `blocking`
 * says the reads are in place.
 */
async function watchMany(
  log: EventLog,
  count: number,
  label: string,
  blocking: () => Promise<boolean>,
  during?: () => Promise<void>,
) {
  const stop = new AbortController();
  const sessions = Array.from({ length: count }, (_, i) => parseSessionId(`${label}-${i}`));
  // Every waiter's wait outlasts the test, so each must be woken by its own entry.
  const waits = sessions.map((s) => log.waitForEntries(s, 0, 60_000, stop.signal, 10));
  await waitFor(blocking, { what: "the shared reads to block" });
  await during?.();
  for (const [i, s] of sessions.entries()) await log.append(s, [delta(`event ${i}`)]);
  const received: (string | undefined)[] = [];
  for (const wait of waits) {
    // A waiter may be told to read the log itself (undefined) only if it never blocked: the bound
    // here is above the waiters' groups, so each one hands over its entry.
    received.push(textOf(await wait));
  }
  stop.abort();
  return received;
}

describe("blocking reads share a bounded set of connections", () => {
  // A server of its own, so CLIENT LIST counts this file's clients alone.
  let server: RedisProcess;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => server.stop());

  it("300 watched sessions on one standalone server: Redis clients stay under the bound and every watcher gets its event", async () => {
    const own = new Redis({ host: "127.0.0.1", port: server.port });
    const log = createRedisEventLog({ redis: own, namespace: "many", maxEntries: 10 });
    let peak = 0;
    // 300 streams spread over the log's default four readers: each one blocks.
    const allBlocking = async () => (await blockedReads(own)).size === 4;
    const received = await watchMany(log, 300, "watched", allBlocking, async () => {
      peak = await clientCount(own);
    });
    peak = Math.max(peak, await clientCount(own));
    expect(received).toEqual(Array.from({ length: 300 }, (_, i) => `event ${i}`));
    // The test's connection, and at most the log's default four readers.
    expect(peak).toBeLessThanOrEqual(1 + 4);
    await log.close();
    own.disconnect();
  });

  it("on a cluster, 100 watched sessions take turns on 8 readers and every watcher gets its event", async () => {
    const log = createRedisEventLog({
      redis: cluster,
      namespace: freshNamespace("many"),
      maxEntries: 10,
      maxReaders: 8,
    });
    const before = await blockedReads(cluster);
    const received = await watchMany(log, 100, "clustered", () => newBlockedRead(cluster, before));
    expect(received).toEqual(Array.from({ length: 100 }, (_, i) => `event ${i}`));
    await log.close();
  });

  it("a stream added while the shared read blocks is read at once, not after the block", async () => {
    const own = new Redis({ host: "127.0.0.1", port: server.port });
    const namespace = freshNamespace("added");
    // One reader blocking for a minute: only an interruption lets the second stream in.
    const readers = createLogReaders({ redis: own, maxReaders: 1, blockMs: 60_000 });
    const stop = new AbortController();
    const first = readers.wait({
      key: `${namespace}:{a}:events`,
      afterSeq: 0,
      limit: 10,
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    await waitFor(async () => (await blockedReads(own)).size === 1, {
      what: "the first stream's read to block",
    });
    const issued = await xreadsRun(own);
    const second = readers.wait({
      key: `${namespace}:{b}:events`,
      afterSeq: 0,
      limit: 10,
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    // The read is interrupted and issued again, naming both streams, and blocks.
    await waitFor(
      async () => (await xreadsRun(own)) > issued && (await blockedReads(own)).size === 1,
      { what: "the read naming the second stream to block" },
    );
    await own.xadd(`${namespace}:{b}:events`, "1-1", "t", "x", "e", "{}");
    expect((await second)?.map(([id]) => id)).toEqual(["1-1"]);
    expect(readers.connections()).toBe(1);
    stop.abort();
    expect(await first).toBeUndefined();
    readers.close();
    own.disconnect();
  });

  it("on a cluster, a waiter from before the point the blocked read names restarts it at once", async () => {
    const namespace = freshNamespace("behind");
    const key = `${namespace}:{c}:events`;
    await cluster.xadd(key, "1-1", "t", "x", "e", "{}");
    // One reader blocking for a minute from entry 1: a waiter from 0 needs a new read.
    const readers = createLogReaders({ redis: cluster, maxReaders: 1, blockMs: 60_000 });
    const stop = new AbortController();
    const before = await blockedReads(cluster);
    const ahead = readers.wait({
      key,
      afterSeq: 1,
      limit: 10,
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    await waitFor(() => newBlockedRead(cluster, before), {
      what: "the read from entry 1 to block",
    });
    const behind = readers.wait({
      key,
      afterSeq: 0,
      limit: 10,
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    expect((await behind)?.map(([id]) => id)).toEqual(["1-1"]);
    stop.abort();
    expect(await ahead).toBeUndefined();
    readers.close();
  });

  it("a wait that times out while the shared read covers its stream is told nothing arrived, not to read the log", async () => {
    const own = new Redis({ host: "127.0.0.1", port: server.port });
    const key = `${freshNamespace("covered")}:{d}:events`;
    const readers = createLogReaders({ redis: own, maxReaders: 1, blockMs: 60_000 });
    const stop = new AbortController();
    const first = readers.wait({
      key,
      afterSeq: 0,
      limit: 10,
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    await waitFor(async () => (await blockedReads(own)).size === 1, {
      what: "the shared read to block",
    });
    // Joins the read already under way: a watch re-arming after its poll does this every second,
    // and being told to read the log each time would cost a read per watch per second.
    const second = readers.wait({
      key,
      afterSeq: 0,
      limit: 10,
      timeoutMs: 200,
      signal: stop.signal,
    });
    expect(await second).toEqual([]);
    stop.abort();
    expect(await first).toBeUndefined();
    readers.close();
    own.disconnect();
  });
});
