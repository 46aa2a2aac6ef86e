// The server's own variables (ADR 0033): where it listens, who may call, how turns and leases are
// paced. Each is an entry of the one schema; config.ts reads them into TetherConfig.
import { checkTenantName } from "../api/tenancy.js";
import { checkCorsOrigin } from "./cors.js";
import { DEFAULT_PARKED_TURN_TTL_MS } from "../domain/parked-turns.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../ports/runtime-store.js";
import {
  ConfigError,
  integer,
  names,
  oneOf,
  text,
  variable,
  type ConfigReader,
} from "./config-schema.js";

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

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** "key1=tenantA,key2=tenantB"; never echoes an entry: it holds a secret. */
function apiKeys(raw: string): Map<string, string> {
  const keys = new Map<string, string>();
  for (const entry of raw.split(",")) {
    const trimmed = entry.trim();
    if (trimmed === "") continue;
    const eq = trimmed.lastIndexOf("=");
    if (eq <= 0 || eq === trimmed.length - 1) {
      throw new Error(`entry ${keys.size + 1} is not key=tenant`);
    }
    const tenant = checkTenantName(trimmed.slice(eq + 1));
    keys.set(trimmed.slice(0, eq), tenant);
  }
  if (keys.size === 0) throw new Error("is set but holds no key=tenant");
  return keys;
}

function checkModelName(model: string): string {
  if (!/^[A-Za-z0-9._:/@-]{1,128}$/u.test(model)) {
    throw new Error(
      `model "${model}" must be 1-128 characters of letters, digits, '.', '_', ':', '/', '@', '-'`,
    );
  }
  return model;
}

/** Tool names as the model sees them. */
function checkToolName(tool: string): void {
  if (!/^[A-Za-z0-9_-]{1,64}$/u.test(tool)) {
    throw new Error(`"${tool}" is not a tool name (letters, digits, '_', '-')`);
  }
}

export const SERVER_VARIABLES = {
  host: variable("TETHER_HOST", "127.0.0.1", text, "address the one port binds to"),
  port: variable(
    "TETHER_PORT",
    "50051",
    integer(0, 65535),
    "the one port for gRPC, gRPC-Web and Connect (h2c and HTTP/1.1); `0` picks a free port",
  ),
  metricsPort: variable(
    "TETHER_METRICS_PORT",
    "9464",
    integer(0, 65535),
    "Prometheus `/metrics`; `0` disables",
  ),
  metricsTenants: variable(
    "TETHER_METRICS_TENANTS",
    undefined,
    names(checkTenantName),
    "`a,b`: tenants with metric series of their own besides those of `TETHER_API_KEYS`",
  ),
  corsOrigins: variable(
    "TETHER_CORS_ORIGINS",
    undefined,
    names(checkCorsOrigin),
    "`https://app.example.com,…` or `*`: origins whose browser pages may call the service (CORS); none by default",
  ),
  metricsModels: variable(
    "TETHER_METRICS_MODELS",
    undefined,
    names(checkModelName),
    "`a,b`: models with metric series of their own besides the provider's model",
  ),
  apiKeys: variable(
    "TETHER_API_KEYS",
    undefined,
    apiKeys,
    "`key1=tenantA,key2=tenantB`: bearer keys mapped to tenants; unset: auth off",
  ),
  tlsCertFile: variable("TETHER_TLS_CERT_FILE", undefined, text, "TLS certificate (PEM file)"),
  tlsKeyFile: variable("TETHER_TLS_KEY_FILE", undefined, text, "TLS private key (PEM file)"),
  maxMessageBytes: variable(
    "TETHER_MAX_MESSAGE_BYTES",
    String(DEFAULT_MAX_MESSAGE_BYTES),
    integer(1024, 2 ** 31 - 1),
    "largest message, 4 MiB",
  ),
  requestTimeoutMs: variable(
    "TETHER_REQUEST_TIMEOUT_MS",
    "30000",
    integer(1, DAY_MS),
    "deadline of unary calls whose client set none",
  ),
  logLevel: variable("TETHER_LOG_LEVEL", "info", oneOf(LOG_LEVELS), "pino level"),
  drainTimeoutMs: variable(
    "TETHER_DRAIN_TIMEOUT_MS",
    "25000",
    integer(0, HOUR_MS),
    "on SIGTERM, how long running turns get to commit",
  ),
  leaseTtlMs: variable(
    "TETHER_LEASE_TTL_MS",
    "30000",
    integer(300, HOUR_MS),
    "session lease duration; renewed every third of it",
  ),
  sweepIntervalMs: variable(
    "TETHER_SWEEP_INTERVAL_MS",
    "2000",
    integer(50, HOUR_MS),
    "how often a replica looks for sessions whose holder died",
  ),
  clientToolTimeoutMs: variable(
    "TETHER_CLIENT_TOOL_TIMEOUT_MS",
    "120000",
    integer(100, DAY_MS),
    "how long a turn waits for `SubmitToolResults` before it parks",
  ),
  turnStartsPerIteration: variable(
    "TETHER_TURN_STARTS_PER_ITERATION",
    "4",
    integer(0, 10_000),
    "turns started per event-loop iteration (ADR 0025); `0`: all at once",
  ),
  parkAfterMs: variable(
    "TETHER_PARK_AFTER_MS",
    "2000",
    integer(0, DAY_MS),
    "how long a turn waits only for outside answers before it parks",
  ),
  parkedTurnTtlMs: variable(
    "TETHER_PARKED_TURN_TTL_MS",
    String(DEFAULT_PARKED_TURN_TTL_MS),
    integer(1_000, 30 * DAY_MS),
    "how long a turn may stay parked before it ends as park_expired",
  ),
  idempotencyKeyTtlMs: variable(
    "TETHER_IDEMPOTENCY_KEY_TTL_MS",
    String(DAY_MS),
    integer(60_000, 30 * DAY_MS),
    "how long the front door keeps a create's `Idempotency-Key` (a retry within it gets the first answer)",
  ),
  approvalRequiredTools: variable(
    "TETHER_APPROVAL_REQUIRED_TOOLS",
    undefined,
    names(checkToolName),
    "`name1,name2`: tools whose every call waits for `DecideToolCalls`",
  ),
  ownerId: variable(
    "TETHER_OWNER_ID",
    undefined,
    text,
    "this replica's lease identity (the pod name); unset: the hostname",
  ),
} as const;

/** Both TLS files, or neither. */
export function tlsOf(read: ConfigReader): { certFile: string; keyFile: string } | undefined {
  const certFile = read.get(SERVER_VARIABLES.tlsCertFile);
  const keyFile = read.get(SERVER_VARIABLES.tlsKeyFile);
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(
      certFile === undefined ? "TETHER_TLS_CERT_FILE" : "TETHER_TLS_KEY_FILE",
      "TLS needs both TETHER_TLS_CERT_FILE and TETHER_TLS_KEY_FILE",
    );
  }
  return certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined;
}
