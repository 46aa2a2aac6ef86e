// Connection helpers shared by the Redis log, signals and ready index: extra connections of the
// same kind as the caller's, and plain commands whose failures become typed store errors.
import type { Cluster, Redis } from "ioredis";
import { toStoreError } from "./scripts.js";

/**
 * A new connection with the caller's settings (blocking reads and pub/sub need their own). Its
 * failures surface on the commands it runs; the listener keeps reconnect attempts off stderr.
 */
export function duplicateConnection(redis: Redis | Cluster): Redis | Cluster {
  const conn =
    "isCluster" in redis && redis.isCluster
      ? (redis as Cluster).duplicate()
      : (redis as Redis).duplicate();
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
