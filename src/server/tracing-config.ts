// Tracing settings (ADR 0013) from the standard OpenTelemetry variables and Tether's two of its
// own, as entries of the one schema (ADR 0033); the composition root hands the result to
// telemetry, which never reads the environment. Every value is checked even when tracing is off:
// a typo fails now, not when tracing is turned on. The OTLP exporter still reads its own
// OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION (and their _TRACES_ forms) itself.
import type {
  BatchConfig,
  OtlpProtocol,
  SamplerConfig,
  TracingConfig,
} from "../telemetry/index.js";
import {
  ConfigError,
  flag,
  integer,
  oneOf,
  text,
  variable,
  type ConfigReader,
} from "./config-schema.js";

const PROTOCOLS: readonly OtlpProtocol[] = ["http/protobuf", "http/json"];
const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

function httpUrl(raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new Error(`must be an http:// or https:// URL, got "${raw}"`);
  }
  return url;
}

function protocol(raw: string): OtlpProtocol {
  if ((PROTOCOLS as readonly string[]).includes(raw)) return raw as OtlpProtocol;
  throw new Error(
    `must be one of ${PROTOCOLS.join(", ")} (Tether exports over HTTP), got "${raw}"`,
  );
}

// Number() also reads the exponent form a YAML float may render as (1e-05).
function ratio(raw: string): number {
  const value = Number(raw);
  if (Number.isFinite(value) && value >= 0 && value <= 1) return value;
  throw new Error(`must be a ratio between 0 and 1, got "${raw}"`);
}

export const TRACING_VARIABLES = {
  endpoint: variable(
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    undefined,
    httpUrl,
    "the Collector's OTLP/HTTP base URL; spans go to `<endpoint>/v1/traces`; unset: tracing off",
  ),
  tracesEndpoint: variable(
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    undefined,
    httpUrl,
    "the full traces URL, used as it is (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`)",
  ),
  protocol: variable(
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "http/protobuf",
    protocol,
    "or `http/json`; anything else (`grpc`) stops the start",
  ),
  tracesProtocol: variable(
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    undefined,
    protocol,
    "the same for traces alone (wins over `OTEL_EXPORTER_OTLP_PROTOCOL`)",
  ),
  serviceName: variable("OTEL_SERVICE_NAME", "tether", text, "`service.name` of every span"),
  sampler: variable(
    "OTEL_TRACES_SAMPLER",
    "parentbased_always_on",
    oneOf(SAMPLERS),
    "`always_on`, `always_off`, `traceidratio`, `parentbased_*`",
  ),
  samplerArg: variable(
    "OTEL_TRACES_SAMPLER_ARG",
    "1",
    ratio,
    "the ratio (0 to 1) of the `traceidratio` samplers",
  ),
  captureContent: variable(
    "TETHER_OTEL_CAPTURE_CONTENT",
    "false",
    flag(),
    "`true` records prompts, answers, tool arguments and results on spans (personal data)",
  ),
  disabled: variable(
    "OTEL_SDK_DISABLED",
    "false",
    flag(),
    "`true` turns tracing off whatever else is set",
  ),
  scheduleDelay: variable(
    "OTEL_BSP_SCHEDULE_DELAY",
    "5000",
    integer(0),
    "ms ended spans wait before they leave in one batch (`0`: at once)",
  ),
  maxQueueSize: variable(
    "OTEL_BSP_MAX_QUEUE_SIZE",
    "2048",
    integer(1),
    "spans held for export; more are dropped (and counted)",
  ),
  maxExportBatchSize: variable(
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    "512",
    integer(1),
    "spans per export request; at most the queue size (a smaller queue lowers it when unset)",
  ),
  exportTimeout: variable(
    "OTEL_BSP_EXPORT_TIMEOUT",
    "30000",
    integer(1),
    "ms one export may take before its spans count as dropped",
  ),
  shutdownTimeoutMs: variable(
    "TETHER_OTEL_SHUTDOWN_TIMEOUT_MS",
    "2000",
    integer(1),
    "ms a stopping replica waits for its last spans (inside the chart's `shutdown.marginSeconds`; ADR 0031)",
  ),
} as const;

const V = TRACING_VARIABLES;

/**
 * Where spans go: the traces endpoint as given, or the general endpoint with the signal's path
 * appended (the OTLP exporter specification's rule for each variable).
 */
function tracesUrlOf(read: ConfigReader): string | undefined {
  const traces = read.get(V.tracesEndpoint);
  if (traces !== undefined) return traces.href;
  const url = read.get(V.endpoint);
  if (url === undefined) return undefined;
  url.pathname = `${url.pathname.replace(/\/+$/u, "")}/v1/traces`;
  return url.href;
}

function samplerOf(read: ConfigReader): SamplerConfig {
  const kind = read.get(V.sampler);
  if (kind !== "traceidratio" && kind !== "parentbased_traceidratio") return { kind };
  return { kind, ratio: read.get(V.samplerArg) };
}

function batchOf(read: ConfigReader): BatchConfig {
  const maxQueueSize = read.get(V.maxQueueSize);
  // Unset, the batch follows a smaller queue; set, it must fit (the specification requires it,
  // where the SDK would quietly lower it).
  const maxExportBatchSize = read.isSet(V.maxExportBatchSize)
    ? read.get(V.maxExportBatchSize)
    : Math.min(read.get(V.maxExportBatchSize), maxQueueSize);
  if (maxExportBatchSize > maxQueueSize) {
    throw new ConfigError(
      V.maxExportBatchSize.name,
      `must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize}), got "${maxExportBatchSize}"`,
    );
  }
  return {
    scheduledDelayMs: read.get(V.scheduleDelay),
    maxQueueSize,
    maxExportBatchSize,
    exportTimeoutMs: read.get(V.exportTimeout),
  };
}

/** Undefined: tracing is off (no endpoint, or OTEL_SDK_DISABLED=true). */
export function loadTracingConfig(read: ConfigReader): TracingConfig | undefined {
  const tracesUrl = tracesUrlOf(read);
  // The traces-specific protocol wins; the general one is then not read at all.
  const protocol = read.get(V.tracesProtocol) ?? read.get(V.protocol);
  const sampler = samplerOf(read);
  const captureContent = read.get(V.captureContent);
  const batch = batchOf(read);
  const shutdownTimeoutMs = read.get(V.shutdownTimeoutMs);
  const disabled = read.get(V.disabled);
  if (tracesUrl === undefined || disabled) return undefined;
  const serviceName = read.get(V.serviceName);
  return {
    ...{ tracesUrl, protocol, serviceName, sampler, captureContent },
    ...{ batch, shutdownTimeoutMs },
  };
}
