// The EventLog port, the same cases on the memory log and the Redis log: sequence numbers count
// up from 1 without holes, reads page from any point, the retained window is trimmed from the
// oldest end and says where it starts, waiters wake on an append, and remove drops the log.
// Fenced appends are conformance laws: test/conformance/event-log-laws.ts.
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, inject } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import type { SessionEvent } from "../../../src/domain/session-events.js";
import type { EventLog } from "../../../src/ports/event-log.js";
import { createMemoryEventLog } from "../../../src/store/memory/event-log.js";
import { createRedisEventLog } from "../../../src/store/redis/event-log.js";
import { freshNamespace } from "../../support/redis-store-factory.js";
import { blockedReads, newBlockedRead } from "../../support/blocked-reads.js";
import { startRedis } from "../../support/redis-harness.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

const backends: [string, (maxEntries: number) => EventLog][] = [
  ["memory", (maxEntries) => createMemoryEventLog({ maxEntries })],
  [
    "redis",
    (maxEntries) => createRedisEventLog({ redis, namespace: freshNamespace("log"), maxEntries }),
  ],
];

const delta = (text: string): { turnId: string; event: SessionEvent } => ({
  turnId: "t",
  event: { type: "text_delta", text },
});
const texts = (entries: { event: SessionEvent }[]) =>
  entries.map((e) => (e.event.type === "text_delta" ? e.event.text : e.event.type));

describe.each(backends)("the %s event log", (name, make) => {
  it("numbers entries from 1 without holes and pages from any point", async () => {
    const log = make(100);
    const s = parseSessionId("numbering");
    expect(await log.lastSeq(s)).toBe(0);
    expect(await log.append(s, [delta("a"), delta("b")])).toEqual([1, 2]);
    expect(await log.append(s, [delta("c")])).toEqual([3]);
    expect(await log.lastSeq(s)).toBe(3);
    const all = await log.read(s, 0, 10);
    expect(all.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(texts(all.entries)).toEqual(["a", "b", "c"]);
    expect(all.firstRetainedSeq).toBe(1);
    expect(texts((await log.read(s, 1, 1)).entries)).toEqual(["b"]);
    expect((await log.read(s, 3, 10)).entries).toEqual([]);
    expect((await log.read(parseSessionId("never-written"), 0, 10)).entries).toEqual([]);
    await log.close();
  });

  it("trims the oldest entries past its bound and says where the retained window starts", async () => {
    const log = make(5);
    const s = parseSessionId("trimmed");
    for (const text of ["1", "2", "3", "4", "5", "6", "7", "8"]) await log.append(s, [delta(text)]);
    const read = await log.read(s, 0, 100);
    expect(read.firstRetainedSeq).toBe(4);
    expect(read.entries.map((e) => e.seq)).toEqual([4, 5, 6, 7, 8]);
    expect(texts((await log.read(s, 5, 2)).entries)).toEqual(["6", "7"]);
    expect((await log.read(s, 1, 2)).entries.map((e) => e.seq)).toEqual([4, 5]);
    // The tail: the newest entries, oldest first; all of them when fewer are retained.
    expect((await log.tail(s, 2)).map((e) => e.seq)).toEqual([7, 8]);
    expect((await log.tail(s, 50)).map((e) => e.seq)).toEqual([4, 5, 6, 7, 8]);
    expect(await log.tail(parseSessionId("never-written"), 5)).toEqual([]);
    await log.close();
  });

  it("wakes a waiter on an append, and lets one go at its timeout", async () => {
    const log = make(100);
    const s = parseSessionId("waiting");
    const signal = new AbortController().signal;
    const before = name === "redis" ? await blockedReads(redis) : new Set<string>();
    const woken = log.waitForEntries(s, 0, 5_000, signal, 10);
    // The memory log registers the waiter at once; Redis's waits once its read blocks.
    if (name === "redis") {
      await waitFor(() => newBlockedRead(redis, before), { what: "the log's read to block" });
    }
    await log.append(s, [delta("x")]);
    // The entries that arrived come with the wake-up, or the reader is told to read them.
    const arrived = await woken;
    if (name === "redis") expect(texts(arrived ?? [])).toEqual(["x"]);
    else expect(arrived).toBeUndefined();
    const started = Date.now();
    const none = await log.waitForEntries(s, 1, 100, signal, 10);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(none).toEqual(name === "redis" ? [] : undefined);
    await log.close();
  });

  it("hands over what arrived after the point the waiter named, in order", async () => {
    const log = make(100);
    const s = parseSessionId("handed");
    await log.append(s, [delta("a"), delta("b"), delta("c")]);
    const arrived = await log.waitForEntries(s, 1, 1_000, new AbortController().signal, 10);
    if (name === "redis") expect(arrived?.map((e) => e.seq)).toEqual([2, 3]);
    else expect(arrived).toBeUndefined();
    await log.close();
  });

  it("drops a session's entries on remove, and never reuses a sequence number", async () => {
    const log = make(100);
    const s = parseSessionId("removed");
    await log.append(s, [delta("x"), delta("y")]);
    await log.remove(s);
    const read = await log.read(s, 0, 10);
    expect(read.entries).toEqual([]);
    expect(read.firstRetainedSeq).toBe(3);
    expect(await log.append(s, [delta("z")])).toEqual([3]);
    await log.close();
  });
});

describe("blocking waits on a standalone Redis", () => {
  it("an abandoned wait is unblocked and its reader reused: ten waits, one reader connection", async () => {
    // A server of its own, so the connection count is this log's alone.
    const server = await startRedis();
    const own = new Redis({ host: "127.0.0.1", port: server.port });
    try {
      const log = createRedisEventLog({ redis: own, namespace: "waits", maxEntries: 10 });
      const sid = parseSessionId("waiting");
      // Connections the server ever accepted: a reader dropped and opened again counts each time.
      const accepted = async () =>
        Number(/total_connections_received:(\d+)/u.exec(await own.info("stats"))?.[1] ?? NaN);
      const before = await accepted();
      for (let i = 0; i < 10; i++) {
        const stop = new AbortController();
        // A 30 s wait that only an abort can end; the test would time out if the abort did not.
        const waiting = log.waitForEntries(sid, 0, 30_000, stop.signal);
        await waitFor(async () => (await blockedReads(own)).size === 1, {
          what: "a blocking read to serve the wait",
        });
        stop.abort();
        await waiting;
      }
      expect(await accepted()).toBeLessThanOrEqual(before + 1);
      await log.close();
    } finally {
      own.disconnect();
      await server.stop();
    }
  });
});
