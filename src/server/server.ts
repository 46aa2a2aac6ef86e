// The composition root of the network service: routes, interceptors, one listener for every
// protocol, metrics on their own port, health flipped on start and on shutdown. Graceful drain
// and forced close are separate paths: drain waits for in-flight calls, close does not.
import type { IdempotencyKeyStore } from "../ports/idempotency-key-store.js";
import { createMemoryIdempotencyKeyStore } from "../store/memory/idempotency-key-ops.js";
import type { CompactSessionFn } from "../api/session-service.js";
import type { ScheduleActions } from "../api/schedule-actions.js";
import { setMaxListeners } from "node:events";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { connectErrorOf } from "../api/errors.js";
import { createHealthState, ServingStatus, type HealthState } from "../api/health-service.js";
import { serverShuttingDown } from "../domain/errors.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { TetherRuntime } from "../runtime/index.js";
import type { QuotaStore } from "../ports/quota-store.js";
import type { StorageUsage } from "../domain/storage-quotas.js";
import type { Tracer } from "../ports/tracer.js";
import type { TetherConfig } from "./config.js";
import { createFrontDoor, type FrontDoor, type SessionEventSource } from "../agents-api/index.js";
import type { AdmitInput } from "../agents-api/event-routes.js";
import { createKeyCheck } from "./auth.js";
import { startListener } from "./listeners.js";
import { createCorsLayer } from "./cors.js";
import { createLogger, type Logger } from "./logger.js";
import {
  createMetrics,
  startMetricsListener,
  type Metrics,
  type MetricsListener,
} from "./metrics.js";
import type { TenantMetrics } from "./tenant-metrics.js";
import { createTetherInterceptors, createTetherRoutes, type RouteHook } from "./routes.js";
import { createStreamGate, type StreamGate } from "../api/stream-quota.js";
import { refuseExhaustedSubmission } from "../api/quota-service.js";

export interface TetherServerOptions {
  config: TetherConfig;
  store: RuntimeStore;
  logger?: Logger;
  /** The per-tenant series too when given (createMetrics makes both). */
  metrics?: Metrics & Partial<TenantMetrics>;
  /** Registers further services, e.g. `(router) => router.service(TurnService, impl)`. */
  routes?: RouteHook;
  /** The tenant quota counters the configured quotas (config.quotas) are kept in. */
  quotas?: QuotaStore;
  /** The tenant's storage limits with their use, for GetQuotaUsage (ADR 0029). */
  storageUsage?: (tenant: string) => Promise<StorageUsage[]>;
  /** Spans of RPCs; the runtime gets the same tracer (src/telemetry, ADR 0013). */
  tracer?: Tracer;
  /** CompactSession's work: the runtime's. */
  compactSession?: CompactSessionFn;
  /** The runtime the front door's session routes go through (ADR 0037). */
  runtime?: TetherRuntime;
  /** The front door's session events (GET /v1/agents/sessions/{id}/events): the runtime's. */
  sessionEvents?: SessionEventSource;
  /** The front door's automations (ADR 0037): the schedule actions ScheduleService uses. */
  schedules?: ScheduleActions;
  /** Where the front door's create Idempotency-Keys are kept (every replica's: the backend's). */
  idempotencyKeys?: IdempotencyKeyStore;
}

export interface TetherServer {
  /** The bound RPC port (the real one when the config asked for 0). */
  readonly port: number;
  /** The bound metrics port; undefined when metrics are disabled. */
  readonly metricsPort: number | undefined;
  readonly health: HealthState;
  readonly metrics: Metrics;
  /** Aborted when draining starts: long-running work should wind down and stop taking more. */
  readonly draining: AbortSignal;
  /**
   * Graceful: health NOT_SERVING, stop accepting, let in-flight calls finish for up to the drain
   * timeout. Resolves true when everything finished in time (the caller then calls close()).
   */
  drain(): Promise<boolean>;
  /** Forced: aborts every handler, destroys every connection, stops metrics. Idempotent. */
  close(): Promise<void>;
}

export async function createTetherServer(options: TetherServerOptions): Promise<TetherServer> {
  const { config } = options;
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const metrics = options.metrics ?? createMetrics();
  const health = createHealthState();
  const draining = new AbortController();
  const shutdown = new AbortController();
  // Every call in flight listens on both (connect links each call's signal to shutdown; streams
  // end on drain), so their listener count follows the number of open calls, with no bound.
  setMaxListeners(0, draining.signal, shutdown.signal);
  const onRefusal = (tenant: string, limit: string): void =>
    metrics.countQuotaRefusal?.(tenant, limit, "submission");
  const quotas = {
    store: options.quotas,
    config: config.quotas,
    ...(options.storageUsage && { storageUsage: options.storageUsage }),
    onRefusal,
    streams: createStreamGate({
      config: config.quotas,
      onRefusal: (tenant, limit) => {
        logger.info({ tenant, limit }, "stream refused: quota used up");
        onRefusal(tenant, limit);
      },
    }),
  };

  const handler = connectNodeAdapter({
    routes: createTetherRoutes({
      store: options.store,
      health,
      routes: options.routes,
      stopSignal: draining.signal,
      quotas,
      compactSession: options.compactSession,
      maxResponseBytes: config.maxMessageBytes,
    }),
    interceptors: createTetherInterceptors({
      apiKeys: config.apiKeys,
      requestTimeoutMs: config.requestTimeoutMs,
      metrics,
      log: logger,
      quotas,
      tracer: options.tracer,
    }),
    readMaxBytes: config.maxMessageBytes,
    writeMaxBytes: config.maxMessageBytes,
    shutdownSignal: shutdown.signal,
  });

  // The OpenAI Agents API under /v1, beside Connect on the same port (ADR 0037).
  const frontDoor = buildFrontDoor(options, {
    logger,
    metrics,
    streams: quotas.streams,
    admitInput: (tenant) => refuseExhaustedSubmission(quotas, tenant),
  });

  const listener = await startListener({
    host: config.host,
    port: config.port,
    tls: config.tls,
    handler,
    frontDoor,
    limits: config.connections,
    cors: createCorsLayer(config.corsOrigins),
  });
  let metricsListener: MetricsListener | undefined;
  try {
    if (config.metricsPort !== 0) {
      metricsListener = await startMetricsListener(metrics, config.host, config.metricsPort);
    }
  } catch (error) {
    listener.forceClose();
    throw error;
  }
  health.setAll(ServingStatus.SERVING);

  let closed: Promise<void> | undefined;
  return {
    port: listener.port,
    metricsPort: metricsListener?.port,
    health,
    metrics,
    draining: draining.signal,
    async drain() {
      health.setAll(ServingStatus.NOT_SERVING);
      draining.abort();
      listener.stopAccepting();
      const pending = listener.inFlight();
      logger.info({ inFlight: pending, timeoutMs: config.drainTimeoutMs }, "draining");
      const drained = await listener.waitForIdle(config.drainTimeoutMs);
      logger.info({ drained, inFlight: listener.inFlight() }, "drain finished");
      return drained;
    },
    close() {
      closed ??= (async () => {
        health.setAll(ServingStatus.NOT_SERVING);
        draining.abort();
        shutdown.abort(connectErrorOf(serverShuttingDown()));
        listener.forceClose();
        await metricsListener?.close();
      })();
      return closed;
    },
  };
}

/** The front door on the server's own config, log, metrics, tracer and quotas. */
function buildFrontDoor(
  options: TetherServerOptions,
  parts: { logger: Logger; metrics: Metrics; streams: StreamGate; admitInput: AdmitInput },
): FrontDoor {
  const { config } = options;
  const { logger, metrics, streams, admitInput } = parts;
  return createFrontDoor({
    store: options.store,
    runtime: options.runtime,
    tenantOf: createKeyCheck(config.apiKeys),
    mcpServers: config.mcpServers.map((server) => server.name),
    maxBodyBytes: config.maxMessageBytes,
    log: logger,
    metrics,
    tracer: options.tracer,
    sessionEvents: options.sessionEvents && { ...options.sessionEvents, streams },
    schedules: options.schedules,
    admitInput,
    // Without the backend's, this process's own: a retry to this replica still finds its key.
    idempotency: {
      store: options.idempotencyKeys ?? createMemoryIdempotencyKeyStore(),
      ttlMs: config.idempotencyKeyTtlMs,
    },
  });
}
