// Tracing settings, as the composition root hands them in: src/server/tracing-config.ts reads them
// from the standard OpenTelemetry variables (OTEL_*) through the one configuration schema
// (ADR 0033); telemetry never reads the environment. Undefined settings: tracing is off and
// nothing of the SDK is loaded.

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
