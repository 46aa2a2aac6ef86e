// Tracing settings from the OTEL_* variables: off without an endpoint, the endpoint rules of the
// OTLP exporter specification, and a refusal naming the variable for anything Tether cannot honour.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/server/config.js";

/** The tracing settings the composition root hands to telemetry. */
const tracingOf = (env: Record<string, string>) => loadConfig(env).tracing;

function refusal(env: Record<string, string>): ConfigError {
  try {
    tracingOf(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };

describe("tracing configuration (OTEL_*)", () => {
  it("is off without an endpoint, and with OTEL_SDK_DISABLED=true", () => {
    expect(tracingOf({})).toBeUndefined();
    expect(tracingOf({ OTEL_SERVICE_NAME: "x", OTEL_TRACES_SAMPLER: "always_on" })).toBe(undefined);
    expect(tracingOf({ ...ENDPOINT, OTEL_SDK_DISABLED: "true" })).toBeUndefined();
  });

  it("defaults: http/protobuf, service tether, parent-based always-on, no content", () => {
    expect(tracingOf(ENDPOINT)).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: "tether",
      sampler: { kind: "parentbased_always_on" },
      captureContent: false,
      // The SDK environment specification's defaults.
      batch: {
        scheduledDelayMs: 5000,
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
        exportTimeoutMs: 30000,
      },
      shutdownTimeoutMs: 2000,
    });
  });

  it("reads the OTEL_BSP_* batch settings and the shutdown timeout", () => {
    const config = tracingOf({
      ...ENDPOINT,
      OTEL_BSP_SCHEDULE_DELAY: "250",
      OTEL_BSP_MAX_QUEUE_SIZE: "100",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "100",
      OTEL_BSP_EXPORT_TIMEOUT: "4000",
      TETHER_OTEL_SHUTDOWN_TIMEOUT_MS: "1500",
    });
    expect(config).toMatchObject({
      batch: {
        scheduledDelayMs: 250,
        maxQueueSize: 100,
        maxExportBatchSize: 100,
        exportTimeoutMs: 4000,
      },
      shutdownTimeoutMs: 1500,
    });
    // A queue smaller than the default batch: the batch follows it.
    expect(
      tracingOf({ ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: "64" })?.batch.maxExportBatchSize,
    ).toBe(64);
    // 0 is a valid delay: every span leaves at once.
    expect(tracingOf({ ...ENDPOINT, OTEL_BSP_SCHEDULE_DELAY: "0" })?.batch.scheduledDelayMs).toBe(
      0,
    );
  });

  it("appends /v1/traces to the general endpoint, keeps its path, and takes the traces endpoint as is", () => {
    expect(
      tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example/base/" })?.tracesUrl,
    ).toBe("https://otel.example/base/v1/traces");
    expect(
      tracingOf({
        ...ENDPOINT,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:9999/custom",
      })?.tracesUrl,
    ).toBe("http://other:9999/custom");
  });

  it("reads the protocol, service name, sampler with its ratio, and the content flag", () => {
    expect(
      tracingOf({
        ...ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "tether-eu",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        TETHER_OTEL_CAPTURE_CONTENT: "true",
      }),
    ).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      protocol: "http/json",
      serviceName: "tether-eu",
      sampler: { kind: "parentbased_traceidratio", ratio: 0.25 },
      captureContent: true,
      batch: expect.any(Object),
      shutdownTimeoutMs: 2000,
    });
    expect(tracingOf({ ...ENDPOINT, OTEL_TRACES_SAMPLER: "traceidratio" })?.sampler).toEqual({
      kind: "traceidratio",
      ratio: 1,
    });
    // The traces-specific protocol wins over the general one.
    expect(
      tracingOf({
        ...ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      })?.protocol,
    ).toBe("http/json");
  });

  it("refuses what it cannot honour, naming the variable, also while tracing is off", () => {
    expect(refusal({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toMatchObject({
      variable: "OTEL_EXPORTER_OTLP_PROTOCOL",
      problem: 'must be one of http/protobuf, http/json (Tether exports over HTTP), got "grpc"',
    });
    expect(refusal({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }).variable).toBe(
      "OTEL_EXPORTER_OTLP_PROTOCOL",
    );
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }).variable).toBe(
      "OTEL_EXPORTER_OTLP_ENDPOINT",
    );
    expect(refusal({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://x/" }).variable).toBe(
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    );
    expect(refusal({ ...ENDPOINT, OTEL_TRACES_SAMPLER: "sometimes" }).variable).toBe(
      "OTEL_TRACES_SAMPLER",
    );
    expect(
      refusal({ ...ENDPOINT, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" })
        .variable,
    ).toBe("OTEL_TRACES_SAMPLER_ARG");
    expect(refusal({ ...ENDPOINT, TETHER_OTEL_CAPTURE_CONTENT: "yes" }).variable).toBe(
      "TETHER_OTEL_CAPTURE_CONTENT",
    );
    expect(refusal({ OTEL_BSP_SCHEDULE_DELAY: "5s" })).toMatchObject({
      variable: "OTEL_BSP_SCHEDULE_DELAY",
      problem: 'must be a whole number of at least 0, got "5s"',
    });
    expect(refusal({ ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: "0" }).variable).toBe(
      "OTEL_BSP_MAX_QUEUE_SIZE",
    );
    expect(refusal({ ...ENDPOINT, OTEL_BSP_EXPORT_TIMEOUT: "-1" }).variable).toBe(
      "OTEL_BSP_EXPORT_TIMEOUT",
    );
    expect(
      refusal({
        ...ENDPOINT,
        OTEL_BSP_MAX_QUEUE_SIZE: "10",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "20",
      }),
    ).toMatchObject({
      variable: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
      problem: 'must not exceed OTEL_BSP_MAX_QUEUE_SIZE (10), got "20"',
    });
    expect(refusal({ ...ENDPOINT, TETHER_OTEL_SHUTDOWN_TIMEOUT_MS: "1.5" }).variable).toBe(
      "TETHER_OTEL_SHUTDOWN_TIMEOUT_MS",
    );
  });

  it("the server's configuration carries it, and refuses to start with the variable named", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig(ENDPOINT).tracing?.tracesUrl).toBe("http://collector:4318/v1/traces");
    let refused: unknown;
    try {
      loadConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).message).toBe(
      'OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http/protobuf, http/json (Tether exports over HTTP), got "grpc"',
    );
  });
});
