// Builds this replica's runtime: the configured model provider, its lease identity (a new
// incarnation per process start), and the TurnService route that serves it.
import type { Registry } from "prom-client";
import { buildWebhooks, type BuiltWebhooks } from "./webhooks.js";
import { storeLimitsFor } from "../ports/runtime-store.js";
import { systemClock } from "../ports/clock.js";
import { compileUserSchema, createTranscriptCache } from "../runtime/index.js";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { ConnectRouter } from "@connectrpc/connect";
import type { LeaseOwner } from "../domain/lease.js";
import { routeScheduleService, routeTurnService } from "../api/routes.js";
import { createScheduleActions, type ScheduleActions } from "../api/schedule-actions.js";
import type { ModelProvider } from "../ports/model-provider.js";
import type { Tracer } from "../ports/tracer.js";
import { systemSleep } from "../ports/sleep.js";
import { createModelProvider } from "../providers/index.js";
import { redactedServer } from "../mcp/config.js";
import type { OutputSchemaCompiler } from "../mcp/connection.js";
import { createMcpHub, type McpHub } from "../mcp/hub.js";
import type { RuntimeDeps, RuntimeMetrics, BudgetPolicy } from "../runtime/index.js";
import { createTetherRuntime, type TetherRuntime } from "../runtime/index.js";
import { createSessionBus } from "../runtime/index.js";
import { startSweeper, type Sweeper } from "../runtime/index.js";
import { createScheduleFirer, startScheduler, type Scheduler } from "../runtime/index.js";
import { createProcLivenessProbe, currentLiveness } from "../store/shared/local-process.js";
import type { ProviderConfig, TetherConfig } from "./config.js";
import type { Logger } from "./logger.js";
import type { BuiltStore } from "./build-store.js";

export const DEFAULT_MODELS = {
  openai: "gpt-4o-mini",
  anthropic: "claude-3-5-haiku-latest",
} as const;

export function buildProvider(config: ProviderConfig): ModelProvider {
  switch (config.kind) {
    case "echo":
      return createModelProvider({ kind: "echo" });
    case "scripted-tools":
      return createModelProvider({ kind: "scripted-tools" });
    case "openai":
      return createModelProvider({
        kind: "openai-chat",
        apiKey: config.apiKey,
        defaultModel: config.model ?? DEFAULT_MODELS.openai,
        ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
      });
    case "anthropic":
      return createModelProvider({
        kind: "anthropic-messages",
        apiKey: config.apiKey,
        defaultModel: config.model ?? DEFAULT_MODELS.anthropic,
        ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
      });
  }
}

/** Model prices and tenant budgets for the runtime's budget guard (ADR 0016). */
function budgetPolicyOf(config: TetherConfig, backend: BuiltStore): { budgets?: BudgetPolicy } {
  if (!backend.tenantSpend) return {};
  const provider = config.provider;
  const defaultModel =
    provider.kind === "openai" || provider.kind === "anthropic"
      ? (provider.model ?? DEFAULT_MODELS[provider.kind])
      : provider.kind;
  return {
    budgets: {
      defaultModel,
      prices: config.modelPrices,
      tenants: config.tenantBudgets,
      store: backend.tenantSpend,
    },
  };
}

/**
 * Stable per worker (TETHER_OWNER_ID: the pod name in Kubernetes; unset: the hostname), new
 * incarnation on every start.
 */
export function replicaOwner(ownerId: string | undefined): LeaseOwner {
  ownerId ??= hostname();
  return { ownerId, incarnationId: `${ownerId}:${randomUUID()}`, liveness: currentLiveness() };
}

export interface BuiltRuntime {
  runtime: TetherRuntime;
  routes: (router: ConnectRouter) => void;
  sweeper: Sweeper;
  /** This replica's schedule poller (ADR 0020): stopped before the drain. */
  scheduler: Scheduler;
  /** What ScheduleService does to a schedule; the front door's automations do the same. */
  scheduleActions: ScheduleActions;
  /** The MCP servers' connections, when any are configured. */
  mcp: McpHub | undefined;
  /** Webhook delivery (ADR 0021): stop its deliverer on shutdown. */
  webhooks: BuiltWebhooks;
}

/** The runtime's parking settings; a parked turn's progress is one store payload. */
export function parkingOf(config: TetherConfig): RuntimeDeps["parking"] {
  return {
    afterMs: config.parkAfterMs,
    ttlMs: config.parkedTurnTtlMs,
    maxProgressBytes: storeLimitsFor(config.maxMessageBytes).maxPayloadBytes,
  };
}

/** MCP servers' output schemas compile like tenants' schemas: bounded, isolated, RE2 patterns. */
export const mcpOutputSchemas: OutputSchemaCompiler = (schema) => {
  const check = compileUserSchema(schema, "outputSchema");
  return (value) => {
    const mismatch = check(value);
    return mismatch && `${mismatch.path === "" ? "the output" : mismatch.path} ${mismatch.message}`;
  };
};

export function buildRuntime(
  config: TetherConfig,
  backend: BuiltStore,
  logger: Logger,
  metrics?: RuntimeMetrics & {
    setQueueDepth(kind: string, depth: number): void;
    registry?: Registry;
  },
  tracer?: Tracer,
): BuiltRuntime {
  // Connects in the background: a server that is down never holds up the start.
  const mcp =
    config.mcpServers.length === 0
      ? undefined
      : createMcpHub({
          servers: config.mcpServers,
          callTimeoutMs: config.mcpCallTimeoutMs,
          logger,
          outputSchemas: mcpOutputSchemas,
        });
  if (mcp) {
    logger.info({ mcpServers: config.mcpServers.map(redactedServer) }, "MCP servers configured");
  }
  const webhooks = buildWebhooks(config.webhooks, backend.webhooks, logger, metrics?.registry);
  const deps: RuntimeDeps = {
    store: backend.store,
    clock: systemClock,
    transcripts: createTranscriptCache(backend.store),
    log: backend.log,
    signals: backend.signals,
    ready: backend.ready,
    liveness: createProcLivenessProbe(),
    bus: createSessionBus(),
    provider: buildProvider(config.provider),
    ...(mcp && { selectableTools: mcp }),
    sleep: systemSleep,
    owner: replicaOwner(config.ownerId),
    leaseTtlMs: config.leaseTtlMs,
    clientToolTimeoutMs: config.clientToolTimeoutMs,
    turnStartsPerIteration: config.turnStartsPerIteration,
    parking: parkingOf(config),
    approvalRequiredTools: config.approvalRequiredTools,
    defaults: {},
    ...budgetPolicyOf(config, backend),
    logger,
    ...(metrics ? { metrics } : {}),
    quotas: { store: backend.quotas, config: config.quotas },
    ...(tracer && { tracer }),
    ...(webhooks.hook && { webhooks: webhooks.hook }),
  };
  const runtime = createTetherRuntime(deps);
  const scheduler = startScheduler({
    schedules: backend.schedules,
    firer: createScheduleFirer(deps, runtime.driver),
    deps,
    // An occurrence's claim lives like a lease: a dead claimer's fire is retried a TTL later.
    claimTtlMs: config.leaseTtlMs,
    ...(webhooks.announceSchedulePause && { announcePause: webhooks.announceSchedulePause }),
  });
  const sweeper = startSweeper({
    driver: runtime.driver,
    ready: backend.ready,
    logger,
    intervalMs: config.sweepIntervalMs,
    ...(metrics ? { metrics } : {}),
    ...(backend.sweepGuard ? { guard: backend.sweepGuard } : {}),
  });
  const scheduleOptions = {
    schedules: backend.schedules,
    store: backend.store,
    clock: systemClock,
    wake: scheduler.wake,
  };
  return {
    runtime,
    routes: (router) => {
      routeTurnService(router, { runtime });
      routeScheduleService(router, scheduleOptions);
      webhooks.routes(router);
    },
    sweeper,
    scheduler,
    scheduleActions: createScheduleActions(scheduleOptions),
    mcp,
    webhooks,
  };
}
