// Bounded label values for per-tenant and per-model metrics. Every label set is fixed by the
// configuration at start, never by a request: a tenant or model not named there is "other", so a
// caller cannot grow the series count (ADR 0014).
import { DEFAULT_TENANT } from "../api/tenancy.js";
import { TENANT_SEPARATOR } from "../domain/ids.js";
import type { ProviderConfig, TetherConfig } from "./config.js";
import { DEFAULT_MODELS } from "./build-runtime.js";

/** The label of every value outside the configured set. */
export const OTHER_LABEL = "other";

export interface MetricLabels {
  /** The tenants with series of their own ("default" always among them). */
  readonly tenants: readonly string[];
  /** The models with series of their own (the provider's default model among them). */
  readonly models: readonly string[];
  /** The tenant label of a store session id (`<tenant>:<client id>`; no prefix: "default"). */
  tenantOf(sessionId: string): string;
  /** The tenant label of a tenant name. */
  tenantNamed(tenant: string): string;
  /** The model label of what a call asked for; undefined: the provider's default model. */
  modelOf(model: string | undefined): string;
}

export interface MetricLabelsOptions {
  tenants?: Iterable<string>;
  models?: Iterable<string>;
  /** What a call that names no model runs on. */
  defaultModel?: string;
}

export function createMetricLabels(options: MetricLabelsOptions = {}): MetricLabels {
  const tenants = new Set([DEFAULT_TENANT, ...(options.tenants ?? [])]);
  const defaultModel = options.defaultModel ?? "default";
  const models = new Set([defaultModel, ...(options.models ?? [])]);
  return {
    tenants: [...tenants].sort(),
    models: [...models].sort(),
    tenantOf(sessionId) {
      const at = sessionId.indexOf(TENANT_SEPARATOR);
      const tenant = at < 0 ? DEFAULT_TENANT : sessionId.slice(0, at);
      return tenants.has(tenant) ? tenant : OTHER_LABEL;
    },
    tenantNamed: (tenant) => (tenants.has(tenant) ? tenant : OTHER_LABEL),
    modelOf(model) {
      const name = model ?? defaultModel;
      return models.has(name) ? name : OTHER_LABEL;
    },
  };
}

/** The model a provider runs when a call names none (the echo models name themselves). */
export function defaultModelOf(provider: ProviderConfig): string {
  switch (provider.kind) {
    case "echo":
    case "scripted-tools":
      return provider.kind;
    case "openai":
    case "anthropic":
      return provider.model ?? DEFAULT_MODELS[provider.kind];
  }
}

/** Tenants of TETHER_API_KEYS and TETHER_METRICS_TENANTS; models of TETHER_METRICS_MODELS. */
export function metricLabelsOf(config: TetherConfig): MetricLabels {
  return createMetricLabels({
    tenants: [...(config.apiKeys?.values() ?? []), ...config.metricsTenants],
    models: config.metricsModels,
    defaultModel: defaultModelOf(config.provider),
  });
}
