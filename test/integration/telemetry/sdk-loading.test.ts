// Tracing off costs nothing: with no OTLP endpoint the composition root never loads the tracing
// SDK (a loader hook in the child process fails it if any SDK or exporter module is resolved).
// The same child with an endpoint set is refused by the hook: the check can fail.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL("../../support/sdk-loading-child.ts", import.meta.url));

function child(env: Record<string, string>) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_") && !k.startsWith("TETHER_")),
  );
  return run(process.execPath, ["--import", "tsx", CHILD], {
    env: { ...clean, TETHER_LOG_LEVEL: "silent", ...env },
    timeout: 60_000,
  });
}

describe("tracing off", () => {
  it("without an endpoint the server starts and stops without loading the SDK", async () => {
    const { stdout } = await child({
      OTEL_SERVICE_NAME: "tether",
      OTEL_TRACES_SAMPLER: "always_on",
    });
    expect(stdout).toBe("tracer: none\n");
  });

  it("with an endpoint the SDK is loaded (the hook sees it)", async () => {
    const failed = await child({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }).then(
      () => undefined,
      (error: { stderr: string }) => error,
    );
    expect(failed?.stderr).toContain("tracing SDK loaded: ");
    expect(failed?.stderr).toContain("@opentelemetry/");
  });
});

describe("tracing on", () => {
  // An async context (AsyncLocalStorage) hooks every promise of the process in Node 20: it cost a
  // streamed echo turn about a tenth of its throughput. Parents are passed explicitly instead.
  it("loads no async context manager: the SDK starts without @opentelemetry/context-async-hooks", async () => {
    const { stdout } = await child({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1",
      FORBIDDEN_MODULES: "@opentelemetry/context-async-hooks",
    });
    expect(stdout).toBe("tracer: sdk\n");
  });
});
