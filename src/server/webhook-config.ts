// Webhook settings (ADR 0021) as entries of the one schema (ADR 0033). Unset: webhooks on,
// private addresses refused, no endpoints declared.
import { checkClientSessionId, checkTenantName } from "../api/tenancy.js";
import { ConfigError, flag, integer, text, variable, type ConfigReader } from "./config-schema.js";
import {
  parseWebhookEventTypes,
  parseWebhookSecret,
  parseWebhookUrl,
  type WebhookEventType,
} from "../domain/webhooks.js";

/** An endpoint declared by the operator (TETHER_WEBHOOK_ENDPOINTS), upserted at start. */
export interface ConfiguredWebhookEndpoint {
  tenant: string;
  endpointId: string;
  url: string;
  /** Empty: every event type. */
  eventTypes: WebhookEventType[];
  /** The variable the secret was read from, for logs (the secret itself is never logged). */
  secretEnv: string;
  secret: string;
}

export interface WebhookConfig {
  /** TETHER_WEBHOOKS=false: commits and parks write no events and no deliverer runs. */
  enabled: boolean;
  /** TETHER_WEBHOOK_ALLOW_PRIVATE=true: loopback and private addresses may receive deliveries. */
  allowPrivate: boolean;
  /** How often the due-outbox hint is read (a local commit nudges at once). */
  pollMs: number;
  /** How long a claimed outbox row is this replica's. */
  leaseMs: number;
  /** Per request. */
  timeoutMs: number;
  /** TETHER_WEBHOOK_ENDPOINTS: endpoints kept as configured at every start. */
  endpoints: ConfiguredWebhookEndpoint[];
}

export const WEBHOOK_VARIABLES = {
  enabled: variable(
    "TETHER_WEBHOOKS",
    "true",
    flag(true),
    "`false`: commits and parks write no webhook events and no deliverer runs",
  ),
  allowPrivate: variable(
    "TETHER_WEBHOOK_ALLOW_PRIVATE",
    "false",
    flag(true),
    "`true`: deliveries may go to loopback and private addresses (see Webhooks)",
  ),
  pollMs: variable(
    "TETHER_WEBHOOK_POLL_MS",
    "500",
    integer(10, 60_000, "number"),
    "how often a replica looks for due webhook events",
  ),
  leaseMs: variable(
    "TETHER_WEBHOOK_LEASE_MS",
    "60000",
    integer(1_000, 3_600_000, "number"),
    "how long a claimed webhook event is its replica's",
  ),
  timeoutMs: variable(
    "TETHER_WEBHOOK_TIMEOUT_MS",
    "10000",
    integer(100, 120_000, "number"),
    "per-request timeout of a delivery",
  ),
  endpoints: variable(
    "TETHER_WEBHOOK_ENDPOINTS",
    undefined,
    text,
    "JSON list of endpoints the operator declares, created or updated at every start (see Webhooks)",
  ),
} as const;

export function loadWebhookConfig(read: ConfigReader): WebhookConfig {
  const v = WEBHOOK_VARIABLES;
  return {
    enabled: read.get(v.enabled),
    allowPrivate: read.get(v.allowPrivate),
    pollMs: read.get(v.pollMs),
    leaseMs: read.get(v.leaseMs),
    timeoutMs: read.get(v.timeoutMs),
    endpoints: endpointsOf(read),
  };
}

const ENDPOINTS = WEBHOOK_VARIABLES.endpoints.name;
const ENDPOINT_FIELDS = new Set(["tenant", "endpoint_id", "url", "event_types", "secret_env"]);
// A POSIX-style variable name, so the chart's env entries and this list agree on what is valid.
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/u;

function stringField(entry: Record<string, unknown>, key: string, at: string): string {
  const value = entry[key];
  if (typeof value !== "string" || value === "")
    throw new ConfigError(ENDPOINTS, `${at}.${key} must be a non-empty string`);
  return value;
}

// The webhook domain's own rules (URL, event types, secret) and the API's tenant and id rules;
// their errors are reworded as a refusal naming the variable and the entry's field.
function checked<T>(variable: string, at: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw new ConfigError(
      variable,
      `${at}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function endpointOf(raw: unknown, index: number, read: ConfigReader): ConfiguredWebhookEndpoint {
  const at = `[${index}]`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError(ENDPOINTS, `${at} must be an object`);
  }
  const entry = raw as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (!ENDPOINT_FIELDS.has(key))
      throw new ConfigError(ENDPOINTS, `${at}.${key} is not a known field`);
  }
  const tenant = stringField(entry, "tenant", at);
  checked(ENDPOINTS, `${at}.tenant`, () => checkTenantName(tenant));
  const endpointId = stringField(entry, "endpoint_id", at);
  checked(ENDPOINTS, at, () => checkClientSessionId(endpointId, "endpoint_id"));
  const url = stringField(entry, "url", at);
  const types = entry["event_types"] ?? [];
  if (!Array.isArray(types) || types.some((t) => typeof t !== "string")) {
    throw new ConfigError(ENDPOINTS, `${at}.event_types must be a list of strings`);
  }
  const secretEnv = stringField(entry, "secret_env", at);
  if (!ENV_NAME.test(secretEnv)) {
    throw new ConfigError(ENDPOINTS, `${at}.secret_env must be an environment variable name`);
  }
  const secret = read.named(secretEnv)?.trim() ?? "";
  if (secret === "")
    throw new ConfigError(secretEnv, `is not set (named by ${ENDPOINTS}${at}.secret_env)`);
  return {
    tenant,
    endpointId,
    url: checked(ENDPOINTS, at, () => parseWebhookUrl(url, "url")),
    eventTypes: checked(ENDPOINTS, at, () =>
      parseWebhookEventTypes(types as string[], "event_types"),
    ),
    secretEnv,
    secret: checked(secretEnv, `named by ${ENDPOINTS}${at}.secret_env`, () =>
      parseWebhookSecret(secret, "secret"),
    ),
  };
}

function endpointsOf(read: ConfigReader): ConfiguredWebhookEndpoint[] {
  const raw = read.get(WEBHOOK_VARIABLES.endpoints);
  if (raw === undefined) return [];
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    throw new ConfigError(ENDPOINTS, "must be a JSON list of endpoints");
  }
  if (!Array.isArray(list)) throw new ConfigError(ENDPOINTS, "must be a JSON list of endpoints");
  const endpoints = list.map((entry, i) => endpointOf(entry, i, read));
  const seen = new Set<string>();
  endpoints.forEach((e, i) => {
    const key = `${e.tenant}/${e.endpointId}`;
    if (seen.has(key))
      throw new ConfigError(
        ENDPOINTS,
        `[${i}] repeats endpoint ${e.endpointId} of tenant ${e.tenant}`,
      );
    seen.add(key);
  });
  return endpoints;
}
