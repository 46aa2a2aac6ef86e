// The event log on Redis Streams: one stream per session under the session's hash tag, entry ids
// `<seq>-1` so the id is the cursor, trimmed to an approximate length. Appends are fenced by the
// session lease in the same script; blocking readers share a bounded set of connections
// (log-readers.ts), however many sessions are watched.
import type { Cluster, Redis } from "ioredis";
import { leaseExpired } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { SessionEvent } from "../../domain/session-events.js";
import type { EventLog, LogEntry } from "../../ports/event-log.js";
import { sessionEventKeys, sessionKeys } from "./keys.js";
import { REPLY } from "./replies.js";
import { DEFAULT_LOG_MAX_ENTRIES } from "./context.js";
import { createLogReaders, type RawEntry } from "./log-readers.js";
import { ASYNC_DURABILITY, confirmRead, type RedisDurability } from "./durability.js";
import { createScriptRunner, toStoreError } from "./scripts.js";

export interface RedisEventLogOptions {
  redis: Redis | Cluster;
  namespace?: string;
  /** Entries kept per session; older ones are trimmed and readers get a gap. */
  maxEntries?: number;
  /**
   * Connections this log's blocking reads share (ADR 0028): each runs one XREAD for many
   * sessions, so the count does not grow with watches. Default 4 on a standalone server, 16 on
   * a cluster (where one XREAD names one session, and sessions take turns past the bound).
   */
  maxReaders?: number;
  /**
   * The store's durability (ADR 0017). Appends are never waited for; in `replicated` mode a
   * read that returns a turn's completion returns it only once the replicas hold it, because
   * the commit appends it (ADR 0023) before the commit's own WAIT has confirmed either.
   */
  durability?: RedisDurability;
}

function entryOf(id: string, turnId: string, json: string): LogEntry {
  return { seq: Number(id.split("-")[0]), turnId, event: JSON.parse(json) as SessionEvent };
}

function toEntry([id, fields]: RawEntry): LogEntry {
  let turnId = "";
  let json = "null";
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === "t") turnId = fields[i + 1] ?? "";
    else if (fields[i] === "e") json = fields[i + 1] ?? "null";
  }
  return entryOf(id, turnId, json);
}

export function createRedisEventLog(options: RedisEventLogOptions): EventLog {
  const { redis } = options;
  const namespace = options.namespace ?? "tether";
  const maxEntries = options.maxEntries ?? DEFAULT_LOG_MAX_ENTRIES;
  const scripts = createScriptRunner(redis);
  const durability = options.durability ?? ASYNC_DURABILITY;
  /** Entries that announce a commit wait for the replicas to hold it (see `durability`). */
  const confirmed = async (sessionId: SessionId, entries: LogEntry[]): Promise<LogEntry[]> => {
    if (durability.mode === "async") return entries;
    if (entries.some((entry) => entry.event.type === "turn_completed")) {
      await confirmRead(redis, durability, sessionEventKeys(namespace, sessionId).events);
    }
    return entries;
  };
  const readers = createLogReaders({
    redis,
    maxReaders: options.maxReaders ?? (redis.isCluster ? 16 : 4),
  });

  return {
    async append(sessionId, entries, fence) {
      const keys = sessionEventKeys(namespace, sessionId);
      const args: (string | number)[] = [
        fence?.leaseToken ?? "",
        fence?.fencingToken ?? 0,
        maxEntries,
      ];
      for (const entry of entries) args.push(entry.turnId, JSON.stringify(entry.event));
      const reply = await scripts.run(
        "appendEvents",
        [keys.events, keys.eventSeq, sessionKeys(namespace, sessionId).lease],
        args,
      );
      if (reply[0] === REPLY.LEASE_EXPIRED) throw leaseExpired(sessionId, fence?.fencingToken ?? 0);
      return reply.slice(1).map(Number);
    },

    async lastSeq(sessionId) {
      try {
        return Number((await redis.get(sessionEventKeys(namespace, sessionId).eventSeq)) ?? 0);
      } catch (error) {
        throw toStoreError(error);
      }
    },

    async read(sessionId, afterSeq, limit) {
      const keys = sessionEventKeys(namespace, sessionId);
      // One script: the page and the oldest retained entry in one command.
      const reply = await scripts.run(
        "readEvents",
        [keys.events, keys.eventSeq],
        [afterSeq, limit],
      );
      const entries: LogEntry[] = [];
      for (let i = 2; i + 2 < reply.length; i += 3) {
        entries.push(entryOf(String(reply[i]), String(reply[i + 1]), String(reply[i + 2])));
      }
      return { entries: await confirmed(sessionId, entries), firstRetainedSeq: Number(reply[1]) };
    },

    // XREAD hands over what arrived, so a watch need not read the log again after each wake-up.
    async tail(sessionId, limit) {
      try {
        const newest = (await redis.xrevrange(
          sessionEventKeys(namespace, sessionId).events,
          "+",
          "-",
          "COUNT",
          limit,
        )) as RawEntry[];
        return newest.reverse().map(toEntry);
      } catch (error) {
        throw toStoreError(error);
      }
    },

    async waitForEntries(
      sessionId: SessionId,
      afterSeq: number,
      timeoutMs: number,
      signal: AbortSignal,
      limit = 1,
    ) {
      const entries = await readers.wait({
        key: sessionEventKeys(namespace, sessionId).events,
        afterSeq,
        limit,
        timeoutMs,
        signal,
      });
      // An abort ends the wait with no reply too: that is no news, not "nothing arrived".
      if (entries === undefined || signal.aborted) return undefined;
      // A failed confirmation is only a wake-up; the reader's next read reports real failures.
      return confirmed(sessionId, entries.map(toEntry)).catch(() => undefined);
    },

    async remove(sessionId) {
      try {
        await redis.del(sessionEventKeys(namespace, sessionId).events);
      } catch (error) {
        throw toStoreError(error);
      }
    },

    async close() {
      readers.close();
    },
  };
}
