// The real process with tracing on: spans of the last turn reach the Collector when the replica
// stops gracefully. The SDK batches spans for 5 s; a SIGTERM right after the turn ends the process
// sooner, so the spans arrive because main.ts shuts the tracer provider down (it flushes) before
// the process exits.
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.js";
import { freePort } from "../support/redis-harness.js";
import { waitFor } from "../support/wait-for.js";

const repo = resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
let receiver: OtlpReceiver | undefined;

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }
  await receiver?.close();
  receiver = undefined;
});

describe("traces at shutdown", () => {
  it("a graceful stop sends the spans still batched, with the configured headers", async () => {
    receiver = await startOtlpReceiver();
    const port = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", join(repo, "src/server/main.ts")], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        TETHER_HOST: "127.0.0.1",
        TETHER_PORT: String(port),
        TETHER_METRICS_PORT: "0",
        TETHER_OWNER_ID: "traced-replica",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: "tether-e2e",
        // Read by the exporter itself, as the OTLP exporter specification says.
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer collector-token",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let output = "";
    child.stdout.on("data", (b: Buffer) => (output += b.toString()));
    child.stderr.on("data", (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` });
    const health = createClient(Health, transport);
    await waitFor(
      () =>
        health
          .check({ service: "" }, { timeoutMs: 1_000 })
          .then((r) => r.status === Status.SERVING)
          .catch(() => child.exitCode !== null),
      { timeoutMs: 20_000, intervalMs: 100, what: "the server to serve" },
    );
    expect(output).toContain('"tracing":"http/protobuf');

    const turns = createClient(TurnService, transport);
    let completed = false;
    for await (const r of turns.streamTurn({
      sessionId: "traced",
      input: [{ kind: { case: "text", value: "hello" } }],
    })) {
      if (r.event?.event.case === "turnCompleted") completed = true;
    }
    expect(completed).toBe(true);
    child.kill("SIGTERM");
    expect(await exited, output).toBe(0);

    const names = receiver.spans.map((s) => s.name);
    expect(names).toContain("tether.v1.TurnService/StreamTurn");
    expect(names).toContain("invoke_agent");
    expect(names).toContain("chat");
    const turn = receiver.spans.find((s) => s.name === "invoke_agent");
    expect(turn?.resource).toMatchObject({
      "service.name": "tether-e2e",
      "service.instance.id": "traced-replica",
    });
    expect(turn?.attributes["tether.turn.outcome"]).toBe("finished.assistant_message");
    expect(new Set(receiver.requests.map((r) => r.authorization))).toEqual(
      new Set(["Bearer collector-token"]),
    );
  });
});
