// The event log on Redis Streams: one stream per session under the session's hash tag, entry ids
// `<seq>-1` so the id is the cursor, trimmed to an approximate length. Appends are fenced by the
// session lease in the same script; readers block with XREAD on a pool of connections that are reused.
import type { Cluster, Redis } from "ioredis";
import { leaseExpired } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { SessionEvent } from "../../domain/session-events.js";
import type { EventLog, LogEntry } from "../../ports/event-log.js";
import { sessionEventKeys, sessionKeys } from "./keys.js";
import { REPLY } from "./replies.js";
import { readerConnection } from "./connections.js";
import { DEFAULT_LOG_MAX_ENTRIES } from "./context.js";
import { ASYNC_DURABILITY, confirmRead, type RedisDurability } from "./durability.js";
import { createScriptRunner, toStoreError } from "./scripts.js";

export interface RedisEventLogOptions {
  redis: Redis | Cluster;
  namespace?: string;
  /** Entries kept per session; older ones are trimmed and readers get a gap. */
  maxEntries?: number;
  /** Idle blocking connections kept for readers. */
  maxIdleReaders?: number;
  /**
   * The store's durability (ADR 0017). Appends are never waited for; in `replicated` mode a
   * read that returns a turn's completion returns it only once the replicas hold it, because
   * the commit appends it (ADR 0023) before the commit's own WAIT has confirmed either.
   */
  durability?: RedisDurability;
}

/** Standalone servers only: a cluster routes the blocked read to a node the caller can't name. */
const isStandalone = (conn: Redis | Cluster): conn is Redis => !conn.isCluster;

type Connection = Redis | Cluster;
type RawEntry = [id: string, fields: string[]];

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
  // Enough for every session a busy replica follows at once, so readers are reused, not reopened.
  const maxIdle = options.maxIdleReaders ?? 64;
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
  const idle: Connection[] = [];
  const busy = new Set<Connection>();
  /** Each standalone reader's client id, asked once, so an abandoned wait can be unblocked. */
  const clientIds = new WeakMap<Connection, Promise<number | undefined>>();
  const watched = new WeakSet<Connection>();
  let closed = false;

  const clientIdOf = (conn: Connection): Promise<number | undefined> => {
    if (!isStandalone(redis) || !isStandalone(conn)) return Promise.resolve(undefined);
    let id = clientIds.get(conn);
    if (!id) {
      // A reconnected reader has a new id (and a restarted server reuses old ones): ask again.
      if (!watched.has(conn)) {
        watched.add(conn);
        conn.on("ready", () => clientIds.delete(conn));
      }
      id = conn.client("ID").then(
        (value) => Number(value),
        () => undefined,
      );
      clientIds.set(conn, id);
    }
    return id;
  };

  const acquire = (): Connection => {
    let conn = idle.pop();
    if (!conn) {
      // A reader's failures reach it through its XREAD.
      conn = readerConnection(redis);
    }
    busy.add(conn);
    return conn;
  };
  const release = (conn: Connection, healthy: boolean): void => {
    busy.delete(conn);
    if (healthy && !closed && idle.length < maxIdle) idle.push(conn);
    else conn.disconnect();
  };

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
      if (signal.aborted || closed) return undefined;
      const conn = acquire();
      const clientId = await clientIdOf(conn);
      if (signal.aborted) {
        release(conn, true);
        return undefined;
      }
      // An abort cannot interrupt XREAD by itself. On a standalone server CLIENT UNBLOCK from the
      // shared connection ends it and the reader goes back to the pool, so a watch that ends
      // costs no new connection; otherwise (a cluster) dropping the connection ends it.
      const onAbort = (): void => {
        if (clientId === undefined || !isStandalone(redis)) return void conn.disconnect();
        redis.client("UNBLOCK", clientId).catch(() => conn.disconnect());
      };
      signal.addEventListener("abort", onAbort, { once: true });
      let healthy = true;
      try {
        const reply = (await (conn as Redis).xread(
          "COUNT",
          Math.max(1, limit),
          "BLOCK",
          Math.max(1, timeoutMs),
          "STREAMS",
          sessionEventKeys(namespace, sessionId).events,
          `${afterSeq}-1`,
        )) as [key: string, entries: RawEntry[]][] | null;
        // An abort ends the wait with no reply too: that is no news, not "nothing arrived".
        if (signal.aborted) return undefined;
        return await confirmed(sessionId, (reply?.[0]?.[1] ?? []).map(toEntry));
      } catch {
        // A failed wait is only a wake-up; the reader's next read reports real failures.
        healthy = false;
        return undefined;
      } finally {
        signal.removeEventListener("abort", onAbort);
        release(conn, healthy && (clientId !== undefined || !signal.aborted));
      }
    },

    async remove(sessionId) {
      try {
        await redis.del(sessionEventKeys(namespace, sessionId).events);
      } catch (error) {
        throw toStoreError(error);
      }
    },

    async close() {
      closed = true;
      for (const conn of [...idle, ...busy]) conn.disconnect();
      idle.length = 0;
      busy.clear();
    },
  };
}
