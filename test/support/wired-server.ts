// The composition main.ts makes (buildStore with the storage limits, buildRuntime, the server),
// started on a free loopback port from an environment: a real server on memory or on Redis.
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Transport } from "@connectrpc/connect";
import { createSessionEventSource } from "../../src/agents-api/index.js";
import { storeLimitsFor } from "../../src/ports/runtime-store.js";
import { buildRuntime } from "../../src/server/build-runtime.js";
import { buildStore, type BuiltStore } from "../../src/server/build-store.js";
import { loadConfig } from "../../src/server/config.js";
import { createLogger } from "../../src/server/logger.js";
import { createMetrics } from "../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../src/server/server.js";
import { applyStorageQuotas, storageUsageReader } from "../../src/server/storage-quotas.js";

export interface WiredServer {
  built: BuiltStore;
  server: TetherServer;
  baseUrl: string;
  /** A gRPC transport that sends `key` as the bearer token (none: no header). */
  as(key?: string): Transport;
  close(): Promise<void>;
}

export async function startWiredServer(
  env: Record<string, string>,
  /** The front door's SSE heartbeat interval (tests shorten it). */
  options: { heartbeatMs?: number } = {},
): Promise<WiredServer> {
  const config = loadConfig({
    TETHER_PORT: "0",
    TETHER_METRICS_PORT: "0",
    TETHER_LOG_LEVEL: "silent",
    ...env,
  });
  const logger = createLogger({ level: "silent" });
  const built = applyStorageQuotas(
    await buildStore(config.store, logger, storeLimitsFor(config.maxMessageBytes)),
    config.quotas,
  );
  const metrics = createMetrics({ defaultMetrics: false });
  const wired = buildRuntime(config, built, logger, metrics);
  const server = await createTetherServer({
    config,
    store: built.store,
    logger,
    metrics,
    routes: wired.routes,
    quotas: built.quotas,
    idempotencyKeys: built.idempotencyKeys,
    storageUsage: storageUsageReader(built.storageQuotas, built.webhooks, config.quotas),
    runtime: wired.runtime,
    sessionEvents: {
      ...createSessionEventSource({ runtime: wired.runtime, log: built.log, store: built.store }),
      ...(options.heartbeatMs !== undefined && { heartbeatMs: options.heartbeatMs }),
    },
    schedules: wired.scheduleActions,
  });
  const baseUrl = `http://127.0.0.1:${server.port}`;
  return {
    built,
    server,
    baseUrl,
    as: (key) =>
      createGrpcTransport({
        baseUrl,
        interceptors: key
          ? [
              (next) => (req) => {
                req.header.set("authorization", `Bearer ${key}`);
                return next(req);
              },
            ]
          : [],
      }),
    close: async () => {
      wired.sweeper.stop();
      await wired.scheduler.stop();
      await wired.webhooks.deliverer?.stop();
      await wired.runtime.drain(2_000);
      await server.close();
      await built.close();
    },
  };
}
