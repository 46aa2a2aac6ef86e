// Process entry (`npm start`): configuration, store, server, and signals. SIGTERM/SIGINT drain
// gracefully (health NOT_SERVING, stop accepting, finish in-flight calls up to the drain
// timeout); a second signal, or a drain that runs out of time, takes the forced path.
import { applyStorageQuotas, storageUsageReader } from "./storage-quotas.js";
import { ConfigError, loadConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { createTetherServer } from "./server.js";
import { createSessionEventSource } from "../agents-api/index.js";
import { watchBackendHealth } from "./backend-health.js";
import { createMetrics } from "./metrics.js";
import { metricLabelsOf } from "./metric-labels.js";
import { buildRuntime, replicaOwner } from "./build-runtime.js";
import { startTelemetry } from "../telemetry/index.js";
import { buildStore } from "./build-store.js";
import { storeLimitsFor } from "../ports/runtime-store.js";
import { watchMcpHealth } from "./mcp-health.js";
import { applyDeclaredEndpoints } from "./webhook-endpoints.js";

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tether: invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel });
  // The store takes whatever a request within the message limit carries, encoded.
  const unlimited = await buildStore(config.store, logger, storeLimitsFor(config.maxMessageBytes));
  // Tenants' creates are held to their storage limits (ADR 0029); the operator's own are not.
  const built = applyStorageQuotas(unlimited, config.quotas);
  const metrics = createMetrics({ labels: metricLabelsOf(config) });
  // Off (and the SDK not loaded) unless an OTLP endpoint is configured. The first drop is logged
  // once; the counter says how many followed.
  let dropsLogged = false;
  const telemetry = await startTelemetry(config.tracing, {
    instanceId: replicaOwner(config.ownerId).ownerId,
    onDroppedSpans: (spans) => {
      metrics.countDroppedSpans(spans);
      if (dropsLogged) return;
      dropsLogged = true;
      logger.warn(
        { spans, tracesUrl: config.tracing?.tracesUrl },
        "spans dropped: the Collector did not take them (further drops are counted in tether_trace_spans_dropped_total)",
      );
    },
  });
  const { tracer } = telemetry;
  const { runtime, routes, sweeper, scheduler, scheduleActions, mcp, webhooks } = buildRuntime(
    config,
    built,
    logger,
    metrics,
    tracer,
  );
  // Declared endpoints are in place before serving, or retried while the store is unreachable.
  const declared = await applyDeclaredEndpoints(
    unlimited.webhooks,
    config.webhooks.endpoints,
    logger,
  );
  const server = await createTetherServer({
    ...{ config, store: built.store, logger, metrics, routes },
    quotas: built.quotas,
    idempotencyKeys: built.idempotencyKeys,
    storageUsage: storageUsageReader(built.storageQuotas, built.webhooks, config.quotas),
    ...(tracer && { tracer }),
    compactSession: (sessionId, instructions) => runtime.compactSession(sessionId, instructions),
    runtime,
    sessionEvents: createSessionEventSource({ runtime, log: built.log, store: built.store }),
    schedules: scheduleActions,
  });
  if (mcp) watchMcpHealth(mcp, server.health);
  const backendHealth = watchBackendHealth({
    ping: built.ping,
    health: server.health,
    logger,
    intervalMs: 1_000,
    draining: server.draining,
    initiallyReachable: built.reachableAtStart,
  });
  logger.info(
    {
      address: `${config.host}:${server.port}`,
      tls: config.tls !== undefined,
      auth: config.apiKeys !== undefined,
      metricsPort: server.metricsPort ?? "off",
      provider: config.provider.kind,
      tracing: config.tracing ? `${config.tracing.protocol} ${config.tracing.tracesUrl}` : "off",
    },
    `tether listening on ${config.host}:${server.port}`,
  );

  let stopping = false;
  const forced = async (signal: string) => {
    logger.warn({ signal }, "forced shutdown");
    sweeper.stop();
    void scheduler.stop();
    void webhooks.deliverer?.stop();
    declared.stop();
    backendHealth.stop();
    await server.close();
    await mcp?.close();
    await built.close();
    await telemetry.shutdown().catch(() => undefined);
    process.exit(1);
  };
  const graceful = async (signal: string) => {
    if (stopping) return forced(signal);
    stopping = true;
    logger.info({ signal }, "shutting down");
    sweeper.stop();
    // No fire starts during the drain; an unsettled claim lapses and another replica re-fires it.
    await scheduler.stop();
    void webhooks.deliverer?.stop();
    declared.stop();
    backendHealth.stop();
    // Health goes NOT_SERVING and new calls stop first; running turns then reach a commit (or
    // release their leases at the deadline) before in-flight streams are waited for.
    // Watch streams end at once and turn streams once their turns are settled, so the calls in
    // flight end with the runtime's drain, not with the drain timeout.
    const serverDrained = server.drain();
    const { released } = await runtime.drain(config.drainTimeoutMs);
    const drained = await serverDrained;
    await server.close();
    await mcp?.close();
    await built.close();
    // The spans of the last turns are still batched: they are sent before the process ends, for
    // at most TETHER_OTEL_SHUTDOWN_TIMEOUT_MS (ADR 0031); what a dead Collector keeps is dropped.
    const traces = await telemetry.shutdown();
    logger.info(
      { drained, released, ...(traces.dropped > 0 && { droppedSpans: traces.dropped }) },
      "stopped",
    );
    // Clean (ADR 0302): every lease released and every call ended within the drain timeout.
    process.exit(drained && released ? 0 : 1);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      graceful(signal).catch((error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      });
    });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`tether: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
