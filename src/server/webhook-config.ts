// Webhook settings (ADR 0021), read from the environment apart from config.ts so the hot file
// gains one line. Unset: webhooks on, private addresses refused.
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
  };
}
