// Connection helpers shared by the Redis log, signals and ready index: extra connections of the
// same kind as the caller's, and plain commands whose failures become typed store errors.
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
 * A new connection like the caller's, for blocking reads and pub/sub (which need their own). Its
 * failures surface on the commands it runs; the listener keeps reconnect attempts off stderr.
 */
export function duplicateConnection(redis: Redis | Cluster): Redis | Cluster {
  // These connections only read (XREAD BLOCK) and subscribe, which are safe to send again after a
  // reconnect, and they block on purpose: so resend, and no command timeout.
  const readOnly = { commandTimeout: undefined, autoResendUnfulfilledCommands: true };
  const conn =
    "isCluster" in redis && redis.isCluster
      ? (redis as Cluster).duplicate([], {
          redisOptions: { ...(redis as Cluster).options.redisOptions, ...readOnly },
        })
      : (redis as Redis).duplicate(readOnly);
  conn.on("error", () => undefined);
  return conn;
}

/** Runs plain Redis commands; any failure leaves as a typed store error, never Redis text. */
export async function withStoreErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toStoreError(error);
  }
}
