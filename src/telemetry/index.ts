// Tracing for the composition root: off (no tracer, and the SDK is never imported) unless an
// OTLP endpoint is configured; on, the SDK module is loaded once and its tracer handed to the
// runtime and the RPC interceptor. shutdown() flushes the spans still batched.
import type { Tracer } from "../ports/tracer.js";
import type { TracingConfig } from "./config.js";

export {
  parseTracingConfig,
  TracingConfigError,
  type OtlpProtocol,
  type SamplerConfig,
  type TracingConfig,
} from "./config.js";

export interface Telemetry {
  /** Undefined when tracing is off. */
  readonly tracer: Tracer | undefined;
  /** Sends every span ended so far. */
  flush(): Promise<void>;
  /** Flushes, then stops exporting. Idempotent. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** service.instance.id: this replica. */
  instanceId?: string;
  /** How long ended spans wait to be sent in one batch (the SDK's 5 s by default). */
  scheduledDelayMs?: number;
}

export const telemetryOff: Telemetry = {
  tracer: undefined,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

export async function startTelemetry(
  config: TracingConfig | undefined,
  options: TelemetryOptions = {},
): Promise<Telemetry> {
  if (config === undefined) return telemetryOff;
  // Loaded here, not at the top: a replica with tracing off never loads the SDK.
  const { startSdkTelemetry } = await import("./sdk.js");
  const sdk = startSdkTelemetry(config, options);
  let stopped: Promise<void> | undefined;
  return {
    tracer: sdk.tracer,
    flush: () => sdk.flush(),
    shutdown: () => (stopped ??= sdk.shutdown()),
  };
}
