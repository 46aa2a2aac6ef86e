// Connection helpers shared by the Redis store, log, signals and ready index: the replica's
// connection settings, extra connections of the same kind as the caller's, and plain commands
// whose failures become typed store errors.
import type { Cluster, Redis, RedisOptions } from "ioredis";
import { toStoreError } from "./scripts.js";

export interface ReplicaConnectionSettings {
  password?: string | undefined;
  /** A command with no reply by then fails; blocking reads run on connections without it. */
  commandTimeoutMs: number;
}

/** The settings of every connection a replica opens to Redis (standalone, or each cluster node). */
export function replicaConnectionOptions(settings: ReplicaConnectionSettings): RedisOptions {
  return {
    ...(settings.password === undefined ? {} : { password: settings.password }),
    // Fail calls fast while Redis is down; the edge maps the failure to UNAVAILABLE.
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    // Reconnect at least every second (ioredis backs off to 5 s): a call made late in an outage
    // fails within about two seconds, and the replica serves again soon after Redis returns.
    retryStrategy: (attempt: number) =>
      Math.min(50 * 2 ** (attempt - 1), 1_000) + Math.floor(Math.random() * 100),
    // A command whose connection dropped before its reply may already have run. The scripts are
    // not idempotent (a log append, a claim), so running one again on the next connection could
    // write twice: it is not resent, and fails as UNAVAILABLE, so the caller's recovery runs.
    autoResendUnfulfilledCommands: false,
    // ioredis 6.0.0 leaves a command that was not resent pending forever; the timeout settles it.
    commandTimeout: settings.commandTimeoutMs,
  };
}

/**
 * For connections that find the primary through Sentinel: after a failover the old primary
 * answers writes with READONLY until the client moves. Reconnect (Sentinel then names the new
 * primary) and send the refused command again, which is safe because a READONLY refusal ran
 * nothing. Not for a fixed URL: reconnecting there reaches the same replica again.
 */
export function reconnectOnReadonly(error: Error): 2 | false {
  return /\bREADONLY\b/u.test(error.message) ? 2 : false;
}

/**
 * A new connection with the caller's settings, changed by `overrides`. Its failures surface on
 * the commands it runs; the listener keeps reconnect attempts off stderr.
 */
export function duplicateConnection(
  redis: Redis | Cluster,
  overrides: Partial<RedisOptions> = {},
): Redis | Cluster {
  const conn =
    "isCluster" in redis && redis.isCluster
      ? (redis as Cluster).duplicate([], {
          redisOptions: { ...(redis as Cluster).options.redisOptions, ...overrides },
        })
      : (redis as Redis).duplicate(overrides);
  conn.on("error", () => undefined);
  return conn;
}

/**
 * A connection for blocking reads (XREAD BLOCK) and pub/sub, which need their own. Their commands
 * are reads, safe to send again after a reconnect, and they block on purpose: so they are resent,
 * with no command timeout.
 */
export function readerConnection(redis: Redis | Cluster): Redis | Cluster {
  return duplicateConnection(redis, {
    commandTimeout: undefined,
    autoResendUnfulfilledCommands: true,
  });
}

/** Runs plain Redis commands; any failure leaves as a typed store error, never Redis text. */
export async function withStoreErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toStoreError(error);
  }
}
