// Tracing for the composition root: off (no tracer, and the SDK is never imported) unless an
// OTLP endpoint is configured; on, the SDK module is loaded once and its tracer handed to the
// runtime and the RPC interceptor. shutdown() flushes the spans still batched.
import type { Tracer } from "../ports/tracer.js";
import type { TracingConfig } from "./config.js";
import type { TelemetryShutdownReport } from "./sdk.js";

export type { OtlpProtocol, BatchConfig, SamplerConfig, TracingConfig } from "./config.js";

export interface Telemetry {
  /** Undefined when tracing is off. */
  readonly tracer: Tracer | undefined;
  /** Sends every span ended so far. */
  flush(): Promise<void>;
  /**
   * Flushes (for at most the configured shutdown timeout, dropping what is not sent by then),
   * then stops exporting. Idempotent.
   */
  shutdown(): Promise<TelemetryShutdownReport>;
}

export type { TelemetryShutdownReport };

export interface TelemetryOptions {
  /** service.instance.id: this replica. */
  instanceId?: string;
  /** Hears every span dropped (tether_trace_spans_dropped_total). */
  onDroppedSpans?: (spans: number) => void;
}

export const telemetryOff: Telemetry = {
  tracer: undefined,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve({ flushedInTime: true, dropped: 0 }),
};

export async function startTelemetry(
  config: TracingConfig | undefined,
  options: TelemetryOptions = {},
): Promise<Telemetry> {
  if (config === undefined) return telemetryOff;
  // Loaded here, not at the top: a replica with tracing off never loads the SDK.
  const { startSdkTelemetry } = await import("./sdk.js");
  const sdk = startSdkTelemetry(config, options);
  let stopped: Promise<TelemetryShutdownReport> | undefined;
  return {
    tracer: sdk.tracer,
    flush: () => sdk.flush(),
    shutdown: () => (stopped ??= sdk.shutdown()),
  };
}
