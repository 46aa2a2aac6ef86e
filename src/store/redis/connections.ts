// Connection helpers shared by the Redis store, log, signals and ready index: the replica's
// connection settings, extra connections of the same kind as the caller's, and plain commands
// whose failures become typed store errors.
import type { Cluster, Redis, RedisOptions } from "ioredis";
import type { Socket } from "node:net";
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
 * Sends what a connection's callers ask for in one turn of the event loop as one socket write
 * (ADR 0004, "One write per turn of the event loop"): the socket is corked at the first command
 * and uncorked after the loop's I/O callbacks (setImmediate), so the commands that many
 * sessions' turns send after the same batch of replies share one write(2) instead of paying one
 * each. A pipeline (runAndWait, MULTI) writes its own batch inside the same cork. Each command is still its own
 * command: written in the order it was sent, answered, timed out, redirected (MOVED, ASK) and
 * failed on its own, so nothing a caller awaits changes but when its bytes leave. On a Cluster,
 * each node's connection coalesces its own commands.
 */
export function coalesceWrites(redis: Redis | Cluster): void {
  if ("isCluster" in redis && redis.isCluster) {
    const cluster = redis as Cluster;
    for (const node of cluster.nodes("all")) coalesceNodeWrites(node);
    cluster.on("+node", (node: Redis) => coalesceNodeWrites(node));
    return;
  }
  coalesceNodeWrites(redis as Redis);
}

const COALESCED = Symbol("tether.coalescedWrites");

function coalesceNodeWrites(redis: Redis): void {
  const marked = redis as Redis & { [COALESCED]?: true };
  if (marked[COALESCED]) return;
  marked[COALESCED] = true;
  const send = redis.sendCommand.bind(redis);
  let corked: Socket | undefined;
  const uncork = () => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  redis.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => {
    const socket = redis.stream as Socket | undefined;
    if (corked === undefined && socket !== undefined && !socket.destroyed) {
      socket.cork();
      corked = socket;
      setImmediate(uncork);
    }
    return send(...args);
  };
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
  coalesceWrites(conn);
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
