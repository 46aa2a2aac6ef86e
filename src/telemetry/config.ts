// Tracing settings from the standard OpenTelemetry variables (OTEL_*), read once at start. A value
// Tether cannot honour stops the start with the variable's name, as every other setting does;
// no endpoint means tracing is off and nothing of the SDK is loaded.

export type OtlpProtocol = "http/protobuf" | "http/json";

export type SamplerConfig =
  | { kind: "always_on" | "always_off" | "parentbased_always_on" | "parentbased_always_off" }
  | { kind: "traceidratio" | "parentbased_traceidratio"; ratio: number };

/**
 * The batching span processor's settings (OTEL_BSP_*, as the SDK environment specification names
 * them, with its defaults): the SDK this version pins does not read its environment itself.
 */
export interface BatchConfig {
  /** OTEL_BSP_SCHEDULE_DELAY: how long ended spans wait to leave in one batch. */
  scheduledDelayMs: number;
  /** OTEL_BSP_MAX_QUEUE_SIZE: spans held for export; more are dropped (and counted). */
  maxQueueSize: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans per export request, at most the queue size. */
  maxExportBatchSize: number;
  /** OTEL_BSP_EXPORT_TIMEOUT: how long one export may take before it counts as failed. */
  exportTimeoutMs: number;
}

export interface TracingConfig {
  /** The full URL spans are posted to (…/v1/traces). */
  tracesUrl: string;
  protocol: OtlpProtocol;
  serviceName: string;
  sampler: SamplerConfig;
  /** TETHER_OTEL_CAPTURE_CONTENT: message contents go on spans (off: sizes and ids only). */
  captureContent: boolean;
  batch: BatchConfig;
  /**
   * TETHER_OTEL_SHUTDOWN_TIMEOUT_MS: how long a stopping replica waits for its last spans to be
   * sent; what is not sent by then is dropped and counted (inside the close margin, ADR 0031).
   */
  shutdownTimeoutMs: number;
}

export class TracingConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = "TracingConfigError";
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const PROTOCOLS: readonly OtlpProtocol[] = ["http/protobuf", "http/json"];
const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function flag(env: Env, name: string): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined || raw === "false") return false;
  if (raw === "true") return true;
  throw new TracingConfigError(name, `must be true or false, got "${raw}"`);
}

function httpUrl(name: string, raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new TracingConfigError(name, `must be an http:// or https:// URL, got "${raw}"`);
  }
  return url;
}

/**
 * Where spans go: the traces endpoint as given, or the general endpoint with the signal's path
 * appended (the OTLP exporter specification's rule for each variable).
 */
function tracesUrlOf(env: Env): string | undefined {
  const traces = text(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (traces !== undefined) return httpUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces).href;
  const general = text(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (general === undefined) return undefined;
  const url = httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT", general);
  url.pathname = `${url.pathname.replace(/\/+$/u, "")}/v1/traces`;
  return url.href;
}

function protocolOf(env: Env): OtlpProtocol {
  const name = text(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const raw = text(env, name) ?? "http/protobuf";
  if (!(PROTOCOLS as readonly string[]).includes(raw)) {
    throw new TracingConfigError(
      name,
      `must be one of ${PROTOCOLS.join(", ")} (Tether exports over HTTP), got "${raw}"`,
    );
  }
  return raw as OtlpProtocol;
}

function samplerOf(env: Env): SamplerConfig {
  const raw = text(env, "OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  const kind = SAMPLERS.find((s) => s === raw);
  if (kind === undefined) {
    throw new TracingConfigError(
      "OTEL_TRACES_SAMPLER",
      `must be one of ${SAMPLERS.join(", ")}, got "${raw}"`,
    );
  }
  if (kind !== "traceidratio" && kind !== "parentbased_traceidratio") return { kind };
  const arg = text(env, "OTEL_TRACES_SAMPLER_ARG") ?? "1";
  const ratio = Number(arg);
  // Number() also reads the exponent form a YAML float may render as (1e-05).
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new TracingConfigError(
      "OTEL_TRACES_SAMPLER_ARG",
      `must be a ratio between 0 and 1, got "${arg}"`,
    );
  }
  return { kind, ratio };
}

/** A whole number of at least `min` (the specification's integers), or the default when unset. */
function integer(env: Env, name: string, fallback: number, min: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = /^\d+$/u.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new TracingConfigError(name, `must be a whole number of at least ${min}, got "${raw}"`);
  }
  return value;
}

function batchOf(env: Env): BatchConfig {
  const maxQueueSize = integer(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1);
  // Unset, the batch follows a smaller queue; set, it must fit (the specification requires it,
  // where the SDK would quietly lower it).
  const maxExportBatchSize = integer(
    env,
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    Math.min(512, maxQueueSize),
    1,
  );
  if (maxExportBatchSize > maxQueueSize) {
    throw new TracingConfigError(
      "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
      `must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize}), got "${maxExportBatchSize}"`,
    );
  }
  return {
    scheduledDelayMs: integer(env, "OTEL_BSP_SCHEDULE_DELAY", 5000, 0),
    maxQueueSize,
    maxExportBatchSize,
    exportTimeoutMs: integer(env, "OTEL_BSP_EXPORT_TIMEOUT", 30_000, 1),
  };
}

/** Undefined: tracing is off (no endpoint, or OTEL_SDK_DISABLED=true). */
export function parseTracingConfig(env: Env): TracingConfig | undefined {
  // Every value is checked even when tracing is off: a typo fails now, not when it is turned on.
  const tracesUrl = tracesUrlOf(env);
  const protocol = protocolOf(env);
  const sampler = samplerOf(env);
  const captureContent = flag(env, "TETHER_OTEL_CAPTURE_CONTENT");
  const batch = batchOf(env);
  const shutdownTimeoutMs = integer(env, "TETHER_OTEL_SHUTDOWN_TIMEOUT_MS", 2000, 1);
  const disabled = flag(env, "OTEL_SDK_DISABLED");
  if (tracesUrl === undefined || disabled) return undefined;
  const serviceName = text(env, "OTEL_SERVICE_NAME") ?? "tether";
  return {
    ...{ tracesUrl, protocol, serviceName, sampler, captureContent },
    ...{ batch, shutdownTimeoutMs },
  };
}
