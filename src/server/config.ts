// Server configuration from TETHER_* environment variables, validated once at start: a bad value
// stops the process with an error naming the variable, never a surprise at the first request.
import { loadWebhookConfig, type WebhookConfig } from "./webhook-config.js";
import { loadConnectionLimits, type ConnectionLimits } from "./connection-config.js";
import { readFileSync } from "node:fs";
import { ConfigError, integer, oneOf, text, type Env } from "./env-values.js";
import { DEFAULT_PARKED_TURN_TTL_MS } from "../domain/parked-turns.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../ports/runtime-store.js";
import { McpConfigError, parseMcpServers, type McpServerConfig } from "../mcp/config.js";
import { checkTenantName } from "../api/tenancy.js";
import type { RedisDurability } from "../store/redis/durability.js";
import {
  parseDurability,
  parseSentinel,
  RedisConfigProblem,
  type SentinelConfig,
} from "./redis-topology-config.js";
import type { QuotaConfig } from "../domain/quotas.js";
import { loadQuotaConfig } from "./quota-config.js";
import { parseTracingConfig, TracingConfigError, type TracingConfig } from "../telemetry/index.js";
import type { ModelPrice, TenantBudget } from "../domain/budgets.js";
import { BudgetConfigError, parseModelPrices, parseTenantBudgets } from "./budget-config.js";

export { ConfigError } from "./env-values.js";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
const LOG_LEVELS: readonly LogLevel[] = [
  "fatal",
  "error",
  "warn",
  "info",
  "debug",
  "trace",
  "silent",
];

export type StoreConfig =
  | { kind: "memory" }
  | {
      kind: "redis";
      /** redis://… of a standalone server; unset when clusterNodes is set. */
      url: string | undefined;
      /** host:port seeds of a Redis Cluster. */
      clusterNodes: { host: string; port: number }[];
      password: string | undefined;
      /** A command with no reply by then fails as UNAVAILABLE (its outcome is unknown). */
      commandTimeoutMs: number;
      /** Discover the primary through Sentinel; exclusive with url and clusterNodes (ADR 0017). */
      sentinel: SentinelConfig | undefined;
      durability: RedisDurability;
    };

/** Passed through to the runtime that builds the ModelProvider; validated here only for shape. */
export type ProviderConfig =
  | { kind: "echo" }
  /** The echo model plus a "/tool <name> <json>" command that asks for a client tool. */
  | { kind: "scripted-tools" }
  | {
      kind: "openai" | "anthropic";
      apiKey: string;
      baseUrl: string | undefined;
      model: string | undefined;
    };

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
  /** Tools (by the name the model sees) whose every call waits for approval. */
  approvalRequiredTools: string[];
  /** MCP servers whose tools turns may offer (TETHER_MCP_SERVERS / TETHER_MCP_CONFIG_FILE). */
  mcpServers: McpServerConfig[];
  /** Per-call timeout of MCP tools, unless a server sets its own. */
  mcpCallTimeoutMs: number;
  /** How often a replica looks for sessions whose holder died. */
  sweepIntervalMs: number;
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

/** "key1=tenantA,key2=tenantB" */
function parseApiKeys(raw: string | undefined): Map<string, string> | undefined {
  if (raw === undefined) return undefined;
  const keys = new Map<string, string>();
  for (const entry of raw.split(",")) {
    const trimmed = entry.trim();
    if (trimmed === "") continue;
    const eq = trimmed.lastIndexOf("=");
    // Never echo the entry: it holds a secret.
    if (eq <= 0 || eq === trimmed.length - 1) {
      throw new ConfigError("TETHER_API_KEYS", `entry ${keys.size + 1} is not key=tenant`);
    }
    const tenant = trimmed.slice(eq + 1);
    try {
      checkTenantName(tenant);
    } catch (error) {
      throw new ConfigError("TETHER_API_KEYS", (error as Error).message);
    }
    keys.set(trimmed.slice(0, eq), tenant);
  }
  if (keys.size === 0) throw new ConfigError("TETHER_API_KEYS", "is set but holds no key=tenant");
  return keys;
}

function parseClusterNodes(raw: string | undefined): { host: string; port: number }[] {
  if (raw === undefined) return [];
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((node) => {
      const match = /^(.+):(\d{1,5})$/u.exec(node);
      const port = Number(match?.[2]);
      if (!match?.[1] || port < 1 || port > 65535) {
        throw new ConfigError("TETHER_REDIS_CLUSTER_NODES", `"${node}" is not host:port`);
      }
      return { host: match[1], port };
    });
}

function parseStore(env: Env): StoreConfig {
  const kind = oneOf(env, "TETHER_STORE", ["memory", "redis"] as const, "memory");
  if (kind === "memory") return { kind };
  const url = text(env, "TETHER_REDIS_URL");
  const clusterNodes = parseClusterNodes(text(env, "TETHER_REDIS_CLUSTER_NODES"));
  const sentinel = redisProblem(() => parseSentinel(env));
  if (url === undefined && clusterNodes.length === 0 && sentinel === undefined) {
    throw new ConfigError(
      "TETHER_REDIS_URL",
      "TETHER_STORE=redis needs TETHER_REDIS_URL, TETHER_REDIS_CLUSTER_NODES or TETHER_REDIS_SENTINELS",
    );
  }
  if (url !== undefined && !/^rediss?:\/\//u.test(url)) {
    throw new ConfigError("TETHER_REDIS_URL", "must start with redis:// or rediss://");
  }
  const commandTimeoutMs = integer(
    env,
    "TETHER_REDIS_COMMAND_TIMEOUT_MS",
    5_000,
    100,
    10 * 60 * 1000,
  );
  return {
    kind,
    url,
    clusterNodes,
    password: text(env, "TETHER_REDIS_PASSWORD"),
    commandTimeoutMs,
    sentinel,
    durability: redisProblem(() => parseDurability(env, commandTimeoutMs)),
  };
}

function redisProblem<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof RedisConfigProblem) throw new ConfigError(error.variable, error.problem);
    throw error;
  }
}

function parseProvider(env: Env): ProviderConfig {
  // "scripted" is the Helm chart's name for the same no-network echo model.
  const kind = oneOf(
    env,
    "TETHER_PROVIDER",
    ["echo", "scripted", "scripted-tools", "openai", "anthropic"] as const,
    "echo",
  );
  if (kind === "echo" || kind === "scripted") return { kind: "echo" };
  if (kind === "scripted-tools") return { kind };
  const prefix = kind === "openai" ? "OPENAI" : "ANTHROPIC";
  const keyName = `TETHER_${prefix}_API_KEY`;
  const apiKey = text(env, keyName) ?? text(env, `${prefix}_API_KEY`);
  if (apiKey === undefined) {
    throw new ConfigError(
      keyName,
      `TETHER_PROVIDER=${kind} needs ${keyName} (or ${prefix}_API_KEY)`,
    );
  }
  const baseName = `TETHER_${prefix}_BASE_URL`;
  const rawBase = text(env, baseName);
  if (rawBase !== undefined && !URL.canParse(rawBase)) {
    throw new ConfigError(baseName, "must be an absolute URL");
  }
  const baseUrl = rawBase === undefined ? undefined : providerBaseUrl(kind, rawBase);
  return { kind, apiKey, baseUrl, model: text(env, "TETHER_MODEL") };
}

/**
 * The base URL as each SDK wants it, from either form a user writes. The OpenAI SDK appends
 * `/chat/completions` to a base that carries the API version (`…/v1`); the Anthropic SDK appends
 * `/v1/messages` itself, so a base ending in `/v1` would call `/v1/v1/messages`. A bare host for
 * OpenAI gets `/v1` (vLLM, Ollama, LiteLLM); any other path is kept (DeepInfra's `/v1/openai`).
 */
export function providerBaseUrl(kind: "openai" | "anthropic", raw: string): string {
  const url = new URL(raw);
  const path = url.pathname.replace(/\/+$/u, "");
  if (kind === "openai") url.pathname = path === "" ? "/v1" : path;
  else url.pathname = path.replace(/\/v1$/u, "");
  return url.toString().replace(/\/+$/u, "");
}

export function loadConfig(env: Env = process.env): TetherConfig {
  const certFile = text(env, "TETHER_TLS_CERT_FILE");
  const keyFile = text(env, "TETHER_TLS_KEY_FILE");
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(
      certFile === undefined ? "TETHER_TLS_CERT_FILE" : "TETHER_TLS_KEY_FILE",
      "TLS needs both TETHER_TLS_CERT_FILE and TETHER_TLS_KEY_FILE",
    );
  }
  return {
    host: text(env, "TETHER_HOST") ?? "127.0.0.1",
    port: integer(env, "TETHER_PORT", 50051, 0, 65535),
    metricsPort: integer(env, "TETHER_METRICS_PORT", 9464, 0, 65535),
    metricsTenants: parseNames(env, "TETHER_METRICS_TENANTS", checkTenantName),
    metricsModels: parseNames(env, "TETHER_METRICS_MODELS", checkModelName),
    store: parseStore(env),
    apiKeys: parseApiKeys(text(env, "TETHER_API_KEYS")),
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    maxMessageBytes: integer(
      env,
      "TETHER_MAX_MESSAGE_BYTES",
      DEFAULT_MAX_MESSAGE_BYTES,
      1024,
      2 ** 31 - 1,
    ),
    requestTimeoutMs: integer(env, "TETHER_REQUEST_TIMEOUT_MS", 30_000, 1, 24 * 60 * 60 * 1000),
    logLevel: oneOf(env, "TETHER_LOG_LEVEL", LOG_LEVELS, "info"),
    drainTimeoutMs: integer(env, "TETHER_DRAIN_TIMEOUT_MS", 25_000, 0, 60 * 60 * 1000),
    provider: parseProvider(env),
    leaseTtlMs: integer(env, "TETHER_LEASE_TTL_MS", 30_000, 300, 60 * 60 * 1000),
    sweepIntervalMs: integer(env, "TETHER_SWEEP_INTERVAL_MS", 2_000, 50, 60 * 60 * 1000),
    clientToolTimeoutMs: integer(
      env,
      "TETHER_CLIENT_TOOL_TIMEOUT_MS",
      120_000,
      100,
      24 * 60 * 60 * 1000,
    ),
    turnStartsPerIteration: integer(env, "TETHER_TURN_STARTS_PER_ITERATION", 4, 0, 10_000),
    parkAfterMs: integer(env, "TETHER_PARK_AFTER_MS", 2_000, 0, 24 * 60 * 60 * 1000),
    parkedTurnTtlMs: integer(
      env,
      "TETHER_PARKED_TURN_TTL_MS",
      DEFAULT_PARKED_TURN_TTL_MS,
      1_000,
      30 * 24 * 60 * 60 * 1000,
    ),
    approvalRequiredTools: parseToolNames(env, "TETHER_APPROVAL_REQUIRED_TOOLS"),
    mcpServers: loadMcpServers(env),
    mcpCallTimeoutMs: integer(env, "TETHER_MCP_CALL_TIMEOUT_MS", 60_000, 1, 24 * 60 * 60 * 1000),
    quotas: loadQuotaConfig(env, (variable, problem) => new ConfigError(variable, problem)),
    ...budgetsOf(env),
    tracing: tracingOf(env),
    webhooks: loadWebhookConfig(env, (variable, problem) => new ConfigError(variable, problem)),
    connections: loadConnectionLimits(env),
  };
}

function budgetsOf(env: Env): Pick<TetherConfig, "modelPrices" | "tenantBudgets"> {
  try {
    return {
      modelPrices: parseModelPrices(text(env, "TETHER_MODEL_PRICES")),
      tenantBudgets: parseTenantBudgets(text(env, "TETHER_TENANT_BUDGETS"), checkTenantName),
    };
  } catch (error) {
    if (error instanceof BudgetConfigError) throw new ConfigError(error.variable, error.message);
    throw error;
  }
}

function tracingOf(env: Env): TracingConfig | undefined {
  try {
    return parseTracingConfig(env);
  } catch (error) {
    if (error instanceof TracingConfigError) throw new ConfigError(error.variable, error.problem);
    throw error;
  }
}

/** TETHER_MCP_SERVERS, or the same JSON array in TETHER_MCP_CONFIG_FILE; none by default. */
function loadMcpServers(env: Env): McpServerConfig[] {
  const inline = text(env, "TETHER_MCP_SERVERS");
  const file = text(env, "TETHER_MCP_CONFIG_FILE");
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError("TETHER_MCP_SERVERS", "set it or TETHER_MCP_CONFIG_FILE, not both");
  }
  const variable = file === undefined ? "TETHER_MCP_SERVERS" : "TETHER_MCP_CONFIG_FILE";
  let json = inline;
  if (file !== undefined) {
    try {
      json = readFileSync(file, "utf8");
    } catch (error) {
      throw new ConfigError(variable, `cannot read ${file}: ${(error as Error).message}`);
    }
  }
  if (json === undefined) return [];
  try {
    return parseMcpServers(json, env);
  } catch (error) {
    if (error instanceof McpConfigError) throw new ConfigError(variable, error.message);
    throw error;
  }
}

/** "name1,name2": tool names as the model sees them. */
function parseToolNames(env: Env, name: string): string[] {
  const names = (text(env, name) ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const tool of names) {
    if (!/^[A-Za-z0-9_-]{1,64}$/u.test(tool)) {
      throw new ConfigError(name, `"${tool}" is not a tool name (letters, digits, '_', '-')`);
    }
  }
  return [...new Set(names)];
}

/** "a,b": a list of names, each checked by `check` (which throws a message naming the value). */
function parseNames(env: Env, name: string, check: (value: string) => string): string[] {
  const names = (text(env, name) ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const value of names) {
    try {
      check(value);
    } catch (error) {
      throw new ConfigError(name, (error as Error).message);
    }
  }
  return [...new Set(names)];
}

function checkModelName(model: string): string {
  if (!/^[A-Za-z0-9._:/@-]{1,128}$/u.test(model)) {
    throw new Error(
      `model "${model}" must be 1-128 characters of letters, digits, '.', '_', ':', '/', '@', '-'`,
    );
  }
  return model;
}
