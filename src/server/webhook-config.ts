// Webhook settings (ADR 0021), read from the environment apart from config.ts so the hot file
// gains one line. Unset: webhooks on, private addresses refused, no endpoints declared.
import { checkClientSessionId, checkTenantName } from "../api/tenancy.js";
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

type Env = Readonly<Record<string, string | undefined>>;

function flag(env: Env, name: string, fallback: boolean, fail: (v: string, p: string) => Error) {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw fail(name, "must be true or false");
}

function ms(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  fail: (v: string, p: string) => Error,
) {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw fail(name, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function loadWebhookConfig(
  env: Env,
  fail: (variable: string, problem: string) => Error,
): WebhookConfig {
  return {
    enabled: flag(env, "TETHER_WEBHOOKS", true, fail),
    allowPrivate: flag(env, "TETHER_WEBHOOK_ALLOW_PRIVATE", false, fail),
    pollMs: ms(env, "TETHER_WEBHOOK_POLL_MS", 500, 10, 60_000, fail),
    leaseMs: ms(env, "TETHER_WEBHOOK_LEASE_MS", 60_000, 1_000, 3_600_000, fail),
    timeoutMs: ms(env, "TETHER_WEBHOOK_TIMEOUT_MS", 10_000, 100, 120_000, fail),
    endpoints: endpointsOf(env, fail),
  };
}

const ENDPOINTS = "TETHER_WEBHOOK_ENDPOINTS";
const ENDPOINT_FIELDS = new Set(["tenant", "endpoint_id", "url", "event_types", "secret_env"]);
// A POSIX-style variable name, so the chart's env entries and this list agree on what is valid.
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/u;

function stringField(entry: Record<string, unknown>, key: string, at: string, fail: Fail): string {
  const value = entry[key];
  if (typeof value !== "string" || value === "")
    throw fail(ENDPOINTS, `${at}.${key} must be a non-empty string`);
  return value;
}

type Fail = (variable: string, problem: string) => Error;

// The webhook domain's own rules (URL, event types, secret) and the API's tenant and id rules;
// their errors are reworded as a refusal naming the variable and the entry's field.
function checked<T>(variable: string, at: string, fail: Fail, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw fail(variable, `${at}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function endpointOf(raw: unknown, index: number, env: Env, fail: Fail): ConfiguredWebhookEndpoint {
  const at = `[${index}]`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw fail(ENDPOINTS, `${at} must be an object`);
  }
  const entry = raw as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (!ENDPOINT_FIELDS.has(key)) throw fail(ENDPOINTS, `${at}.${key} is not a known field`);
  }
  const tenant = stringField(entry, "tenant", at, fail);
  checked(ENDPOINTS, `${at}.tenant`, fail, () => checkTenantName(tenant));
  const endpointId = stringField(entry, "endpoint_id", at, fail);
  checked(ENDPOINTS, at, fail, () => checkClientSessionId(endpointId, "endpoint_id"));
  const url = stringField(entry, "url", at, fail);
  const types = entry["event_types"] ?? [];
  if (!Array.isArray(types) || types.some((t) => typeof t !== "string")) {
    throw fail(ENDPOINTS, `${at}.event_types must be a list of strings`);
  }
  const secretEnv = stringField(entry, "secret_env", at, fail);
  if (!ENV_NAME.test(secretEnv)) {
    throw fail(ENDPOINTS, `${at}.secret_env must be an environment variable name`);
  }
  const secret = env[secretEnv]?.trim() ?? "";
  if (secret === "") throw fail(secretEnv, `is not set (named by ${ENDPOINTS}${at}.secret_env)`);
  return {
    tenant,
    endpointId,
    url: checked(ENDPOINTS, at, fail, () => parseWebhookUrl(url, "url")),
    eventTypes: checked(ENDPOINTS, at, fail, () =>
      parseWebhookEventTypes(types as string[], "event_types"),
    ),
    secretEnv,
    secret: checked(secretEnv, `named by ${ENDPOINTS}${at}.secret_env`, fail, () =>
      parseWebhookSecret(secret, "secret"),
    ),
  };
}

function endpointsOf(env: Env, fail: Fail): ConfiguredWebhookEndpoint[] {
  const raw = env[ENDPOINTS]?.trim();
  if (raw === undefined || raw === "") return [];
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    throw fail(ENDPOINTS, "must be a JSON list of endpoints");
  }
  if (!Array.isArray(list)) throw fail(ENDPOINTS, "must be a JSON list of endpoints");
  const endpoints = list.map((entry, i) => endpointOf(entry, i, env, fail));
  const seen = new Set<string>();
  endpoints.forEach((e, i) => {
    const key = `${e.tenant}/${e.endpointId}`;
    if (seen.has(key))
      throw fail(ENDPOINTS, `[${i}] repeats endpoint ${e.endpointId} of tenant ${e.tenant}`);
    seen.add(key);
  });
  return endpoints;
}
