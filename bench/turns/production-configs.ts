// The configurations bench:turns:production compares, as an operator would set them: each is
// the plain server's settings plus one production feature, and `all` turns every one on.
// Limits and budgets are far above what the run can reach, so nothing ever waits or stops:
// what is measured is the cost of checking and charging them on every turn.
import { randomBytes } from "node:crypto";

export const CONFIGS = ["plain", "webhooks", "quotas", "budget", "tracing", "all"] as const;
export type ConfigName = (typeof CONFIGS)[number];

/**
 * Where the features send what they produce: the webhook receiver (in the benchmark's process)
 * and the OTLP one (a process of its own).
 */
export interface FeatureSinks {
  webhookUrl: string;
  webhookSecret: string;
  otlpEndpoint: string;
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/** The benchmark's sessions run without API keys, so under the `default` tenant. */
const TENANT = "default";
const SECRET_VARIABLE = "BENCH_WEBHOOK_SECRET";

function webhooks(sinks: FeatureSinks): Record<string, string> {
  return {
    TETHER_WEBHOOKS: "true",
    TETHER_WEBHOOK_ALLOW_PRIVATE: "true",
    TETHER_WEBHOOK_ENDPOINTS: JSON.stringify([
      {
        tenant: TENANT,
        endpoint_id: "bench",
        url: sinks.webhookUrl,
        secret_env: SECRET_VARIABLE,
      },
    ]),
    [SECRET_VARIABLE]: sinks.webhookSecret,
  };
}

const QUOTAS = {
  TETHER_QUOTAS: JSON.stringify({
    default: {
      concurrent_turns: 1_000_000,
      turns_per_minute: 1_000_000_000,
      tokens_per_minute: 1_000_000_000_000,
      tokens_per_day: 1_000_000_000_000,
    },
  }),
};

/** A price for every model (`*`) and a daily cost budget for the tenant. */
const BUDGET = {
  TETHER_MODEL_PRICES: JSON.stringify({ "*": { input: 1_000_000, output: 5_000_000 } }),
  TETHER_TENANT_BUDGETS: JSON.stringify({
    [TENANT]: { max_cost_micros: 1_000_000_000_000_000, period: "day" },
  }),
};

function tracing(sinks: FeatureSinks): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: sinks.otlpEndpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
  };
}

/** The server settings of one configuration (store settings aside). */
export function configEnv(name: ConfigName, sinks: FeatureSinks): Record<string, string> {
  // Webhooks are on by default (ADR 0021); the plain configuration turns them off.
  const off = { TETHER_WEBHOOKS: "false" };
  switch (name) {
    case "plain":
      return off;
    case "webhooks":
      return webhooks(sinks);
    case "quotas":
      return { ...off, ...QUOTAS };
    case "budget":
      return { ...off, ...BUDGET };
    case "tracing":
      return { ...off, ...tracing(sinks) };
    case "all":
      return { ...webhooks(sinks), ...QUOTAS, ...BUDGET, ...tracing(sinks) };
  }
}

/** Configurations that deliver webhooks: one `turn.completed` per finished turn. */
export const deliversWebhooks = (name: ConfigName) => name === "webhooks" || name === "all";
