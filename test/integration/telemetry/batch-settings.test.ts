// The batching processor follows the standard OTEL_BSP_* variables, and every span that does not
// reach the Collector is counted: a failed export as it fails, a full queue or a cut flush at
// shutdown. Spans are started through the Tracer port of a telemetry built from the environment,
// as main.ts builds it, and received by a loopback OTLP receiver.
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../src/server/config.js";
import { startTelemetry, type Telemetry } from "../../../src/telemetry/index.js";
import { startOtlpReceiver, type OtlpReceiver } from "../../support/otlp-receiver.js";
import { freePort } from "../../support/redis-harness.js";
import { waitFor } from "../../support/wait-for.js";

let receiver: OtlpReceiver | undefined;
let telemetry: Telemetry | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await telemetry?.shutdown();
  telemetry = undefined;
  await receiver?.close();
  receiver = undefined;
});

/** Telemetry on `endpoint` with `env` added; `dropped` collects what onDroppedSpans hears. */
async function traced(endpoint: string, env: Record<string, string>) {
  const dropped: number[] = [];
  const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env }).tracing;
  telemetry = await startTelemetry(config, { onDroppedSpans: (n) => dropped.push(n) });
  const tracer = telemetry.tracer;
  if (tracer === undefined) throw new Error("tracing is off");
  const endSpans = (count: number): void => {
    for (let i = 0; i < count; i += 1) {
      tracer.startSpan(`span-${i}`, { kind: "internal" }).end();
    }
  };
  return { telemetry, endSpans, dropped };
}

describe("OTEL_BSP_* settings", () => {
  it("OTEL_BSP_SCHEDULE_DELAY: a batch leaves after the delay set, not the SDK's 5 s", async () => {
    receiver = await startOtlpReceiver();
    const { endSpans } = await traced(receiver.endpoint, { OTEL_BSP_SCHEDULE_DELAY: "10" });
    endSpans(1);
    // No flush: only the delay sends it. 3 s is far above 10 ms and below the default 5 s.
    await waitFor(() => receiver?.spans.length === 1, {
      timeoutMs: 3_000,
      what: "the span to leave after OTEL_BSP_SCHEDULE_DELAY",
    });
  });

  it("OTEL_BSP_MAX_EXPORT_BATCH_SIZE: each export carries at most that many spans", async () => {
    receiver = await startOtlpReceiver();
    const { telemetry, endSpans } = await traced(receiver.endpoint, {
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1",
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    endSpans(3);
    await telemetry.flush();
    await waitFor(() => receiver?.spans.length === 3, { what: "three spans" });
    // One request per span (the default batch would carry all three in one).
    expect(receiver.requests).toHaveLength(3);
  });

  it("OTEL_BSP_MAX_QUEUE_SIZE: spans past the queue are dropped, and counted at shutdown", async () => {
    receiver = await startOtlpReceiver();
    const { telemetry, endSpans, dropped } = await traced(receiver.endpoint, {
      OTEL_BSP_MAX_QUEUE_SIZE: "2",
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    // Ended at once: while the first batch is on its way, the queue holds two and drops the rest.
    endSpans(10);
    const report = await telemetry.shutdown();
    const received = receiver.spans.length;
    expect(received).toBeGreaterThanOrEqual(2);
    expect(received).toBeLessThan(10);
    expect(report).toEqual({ flushedInTime: true, dropped: 10 - received });
    expect(dropped).toEqual([10 - received]);
  });
});

describe("spans the Collector does not take", () => {
  it("a failed export counts its spans as dropped when it fails", async () => {
    // Read by the exporter from the process's environment: its retries of a refused connection
    // give up after this.
    vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "300");
    const { telemetry, endSpans, dropped } = await traced(`http://127.0.0.1:${await freePort()}`, {
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    endSpans(4);
    await telemetry.flush().catch(() => undefined);
    expect(dropped).toEqual([4]);
    expect((await telemetry.shutdown()).dropped).toBe(4);
  });
});
