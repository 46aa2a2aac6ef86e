// Vitest global setup: one standalone Redis and one 3-master cluster for the whole run.
// Their addresses reach the tests through `inject("redisUrl")` and `inject("clusterPorts")`.
import type { TestProject } from "vitest/node";
import { startCluster, startRedis, type RedisCluster, type RedisProcess } from "./redis-harness.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    clusterPorts: number[];
  }
}

let servers: Promise<{ redis: RedisProcess; cluster: RedisCluster }> | undefined;
let users = 0;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Several projects share this module; the servers start once and stop with the last user.
  servers ??= (async () => ({ redis: await startRedis(), cluster: await startCluster() }))();
  users++;
  const { redis, cluster } = await servers;
  project.provide("redisUrl", `redis://127.0.0.1:${redis.port}`);
  project.provide("clusterPorts", cluster.ports);
  return async () => {
    users--;
    if (users === 0) {
      await redis.stop();
      await cluster.stop();
    }
  };
}
