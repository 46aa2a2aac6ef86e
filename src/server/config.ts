// Server configuration from the environment, validated once at start: a bad value stops the
// process with a ConfigError naming the variable, never a surprise at the first request. Every
// variable is an entry of the one schema (config-schema.ts, ADR 0033) in its area's table;
// CONFIG_VARIABLES lists them all, and loadConfig is the one place that reads process.env.
import { createConfigReader, type ConfigVariable, type Env } from "./config-schema.js";
import type { McpServerConfig } from "../mcp/config.js";
import type { QuotaConfig } from "../domain/quotas.js";
import type { ModelPrice, TenantBudget } from "../domain/budgets.js";
import type { TracingConfig } from "../telemetry/index.js";
import { SERVER_VARIABLES, tlsOf, type LogLevel } from "./server-config.js";
import { loadStoreConfig, STORE_VARIABLES, type StoreConfig } from "./store-config.js";
import {
  loadMcpServers,
  loadProviderConfig,
  PROVIDER_VARIABLES,
  type ProviderConfig,
} from "./provider-config.js";
import { loadQuotaConfig, QUOTA_VARIABLES } from "./quota-config.js";
import { BUDGET_VARIABLES } from "./budget-config.js";
import { loadTracingConfig, TRACING_VARIABLES } from "./tracing-config.js";
import { loadWebhookConfig, WEBHOOK_VARIABLES, type WebhookConfig } from "./webhook-config.js";
import {
  CONNECTION_VARIABLES,
  loadConnectionLimits,
  type ConnectionLimits,
} from "./connection-config.js";

export { ConfigError, type Env } from "./config-schema.js";
export type { ProviderConfig } from "./provider-config.js";
export type { LogLevel } from "./server-config.js";
export type { StoreConfig } from "./store-config.js";

/** Every variable Tether reads, area by area: the README's configuration tables list exactly these. */
export const CONFIG_VARIABLES: readonly ConfigVariable<unknown>[] = [
  SERVER_VARIABLES,
  STORE_VARIABLES,
  PROVIDER_VARIABLES,
  QUOTA_VARIABLES,
  BUDGET_VARIABLES,
  WEBHOOK_VARIABLES,
  CONNECTION_VARIABLES,
  TRACING_VARIABLES,
].flatMap((table) => Object.values(table));

export interface TetherConfig {
  host: string;
  port: number;
  /** 0 disables the metrics listener. */
  metricsPort: number;
  /** Tenants with metric series of their own besides TETHER_API_KEYS' (TETHER_METRICS_TENANTS). */
  metricsTenants: string[];
  /** Models with metric series of their own besides the default model (TETHER_METRICS_MODELS). */
  metricsModels: string[];
  store: StoreConfig;
  /** API key → tenant; undefined means auth is off and every caller is tenant "default". */
  apiKeys: ReadonlyMap<string, string> | undefined;
  tls: { certFile: string; keyFile: string } | undefined;
  maxMessageBytes: number;
  /** Applied to unary calls whose client set no deadline. */
  requestTimeoutMs: number;
  logLevel: LogLevel;
  drainTimeoutMs: number;
  provider: ProviderConfig;
  /** Session execution lease duration; the runtime renews at a third of it. */
  leaseTtlMs: number;
  /** How long a turn waits for SubmitToolResults before the call fails (until it parks). */
  clientToolTimeoutMs: number;
  /** At most this many turns start per event-loop iteration (ADR 0025); 0: no pacing. */
  turnStartsPerIteration: number;
  /** How long a turn waits only for outside answers before it parks (0: at once). */
  parkAfterMs: number;
  /** How long a turn may stay parked before it ends as park_expired. */
  parkedTurnTtlMs: number;
  /** Origins whose browser pages may call the service (TETHER_CORS_ORIGINS); none: no CORS. */
  corsOrigins: string[];
  /** How long the front door keeps a create's Idempotency-Key (TETHER_IDEMPOTENCY_KEY_TTL_MS). */
  idempotencyKeyTtlMs: number;
  /** Tools (by the name the model sees) whose every call waits for approval. */
  approvalRequiredTools: string[];
  /** MCP servers whose tools turns may offer (TETHER_MCP_SERVERS / TETHER_MCP_CONFIG_FILE). */
  mcpServers: McpServerConfig[];
  /** Per-call timeout of MCP tools, unless a server sets its own. */
  mcpCallTimeoutMs: number;
  /** How often a replica looks for sessions whose holder died. */
  sweepIntervalMs: number;
  /** This replica's lease identity (TETHER_OWNER_ID); undefined: the hostname. */
  ownerId: string | undefined;
  /** Per-tenant quota limits (TETHER_QUOTAS / TETHER_QUOTAS_FILE); none by default. */
  quotas: QuotaConfig;
  /** OpenTelemetry traces (OTEL_*); undefined when off (ADR 0013). */
  tracing: TracingConfig | undefined;
  /** Micros per million tokens by model (TETHER_MODEL_PRICES; ADR 0016). */
  modelPrices: ReadonlyMap<string, ModelPrice>;
  /** Cost caps by tenant (TETHER_TENANT_BUDGETS; ADR 0016). */
  tenantBudgets: ReadonlyMap<string, TenantBudget>;
  /** Webhook delivery (ADR 0021; webhook-config.ts). */
  webhooks: WebhookConfig;
  /** Idle, header and handshake timeouts, per-address and HTTP/2 limits (ADR 0030). */
  connections: ConnectionLimits;
}

export function loadConfig(env: Env = process.env): TetherConfig {
  const read = createConfigReader(env);
  const v = SERVER_VARIABLES;
  const tls = tlsOf(read);
  return {
    host: read.get(v.host),
    port: read.get(v.port),
    metricsPort: read.get(v.metricsPort),
    metricsTenants: read.get(v.metricsTenants) ?? [],
    metricsModels: read.get(v.metricsModels) ?? [],
    store: loadStoreConfig(read),
    apiKeys: read.get(v.apiKeys),
    tls,
    maxMessageBytes: read.get(v.maxMessageBytes),
    requestTimeoutMs: read.get(v.requestTimeoutMs),
    logLevel: read.get(v.logLevel),
    drainTimeoutMs: read.get(v.drainTimeoutMs),
    provider: loadProviderConfig(read),
    leaseTtlMs: read.get(v.leaseTtlMs),
    sweepIntervalMs: read.get(v.sweepIntervalMs),
    clientToolTimeoutMs: read.get(v.clientToolTimeoutMs),
    turnStartsPerIteration: read.get(v.turnStartsPerIteration),
    parkAfterMs: read.get(v.parkAfterMs),
    parkedTurnTtlMs: read.get(v.parkedTurnTtlMs),
    idempotencyKeyTtlMs: read.get(v.idempotencyKeyTtlMs),
    corsOrigins: read.get(v.corsOrigins) ?? [],
    approvalRequiredTools: read.get(v.approvalRequiredTools) ?? [],
    mcpServers: loadMcpServers(read),
    mcpCallTimeoutMs: read.get(PROVIDER_VARIABLES.mcpCallTimeoutMs),
    quotas: loadQuotaConfig(read),
    modelPrices: read.get(BUDGET_VARIABLES.modelPrices) ?? new Map(),
    tenantBudgets: read.get(BUDGET_VARIABLES.tenantBudgets) ?? new Map(),
    tracing: loadTracingConfig(read),
    webhooks: loadWebhookConfig(read),
    connections: loadConnectionLimits(read),
    ownerId: read.get(v.ownerId),
  };
}
