// Starts the real Tether server on a free loopback port, backed by a memory store on a manual
// clock, for integration and wire-conformance tests.
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Transport } from "@connectrpc/connect";
import { createManualClock, type ManualClock } from "../../src/ports/clock.js";
import type { StoreLimits } from "../../src/ports/runtime-store.js";
import type { Tracer } from "../../src/ports/tracer.js";
import type { TetherRuntime } from "../../src/runtime/index.js";
import type { ScheduleActions } from "../../src/api/schedule-actions.js";
import { createMemoryStore, type MemoryStore } from "../../src/store/memory/memory-store.js";
import { createProcLivenessProbe } from "../../src/store/shared/local-process.js";
import { loadConfig } from "../../src/server/config.js";
import { createLogger, type Logger } from "../../src/server/logger.js";
import { createMetrics } from "../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../src/server/server.js";
import type { RouteHook } from "../../src/server/routes.js";

export interface ApiServerHarness {
  server: TetherServer;
  store: MemoryStore;
  clock: ManualClock;
  baseUrl: string;
  /** A gRPC (HTTP/2) transport to the server. */
  transport: Transport;
  close(): Promise<void>;
}

export interface ApiServerOptions {
  env?: Record<string, string>;
  limits?: Partial<StoreLimits>;
  routes?: RouteHook;
  /** The store the server's services use (a fresh memory store on a manual clock otherwise). */
  store?: MemoryStore;
  /** Traces RPCs (the runtime behind the routes gets the same tracer). */
  tracer?: Tracer;
  /** Where the server logs (silent otherwise). */
  logger?: Logger;
  /** The runtime behind the front door's sessions (their turns do not run otherwise). */
  runtime?: TetherRuntime;
  /** The schedule actions behind the front door's automations (none otherwise). */
  schedules?: ScheduleActions;
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServerHarness> {
  const clock = createManualClock();
  const store =
    options.store ??
    createMemoryStore({
      clock,
      livenessProbe: createProcLivenessProbe(),
      ...(options.limits ? { limits: options.limits } : {}),
    });
  const config = loadConfig({
    TETHER_PORT: "0",
    TETHER_METRICS_PORT: "0",
    TETHER_LOG_LEVEL: "silent",
    ...options.env,
  });
  const server = await createTetherServer({
    config,
    store,
    logger: options.logger ?? createLogger({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    ...(options.routes ? { routes: options.routes } : {}),
    ...(options.tracer && { tracer: options.tracer }),
    ...(options.runtime && { runtime: options.runtime }),
    ...(options.schedules && { schedules: options.schedules }),
  });
  const baseUrl = `http://127.0.0.1:${server.port}`;
  return {
    server,
    store,
    clock,
    baseUrl,
    transport: createGrpcTransport({ baseUrl }),
    close: () => server.close(),
  };
}
