// The server process with MCP servers configured (`src/server/main.ts` under tsx): a configuration
// that cannot be used stops it before it listens, naming the entry and field; a usable one gives
// each server a health service and its tools to the turns that select them, with the demo model's
// `/tool` command, as the README's grpcurl example does.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus as Serving,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { waitFor } from "../support/wait-for.js";

const repo = resolve(import.meta.dirname, "../..");
const everythingMain = join(
  dirname(
    createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json"),
  ),
  "dist/index.js",
);

function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", join(repo, "src/server/main.ts")], {
    cwd: repo,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TETHER_HOST: "127.0.0.1",
      TETHER_PORT: "0",
      TETHER_METRICS_PORT: "0",
      TETHER_LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr.on("data", (b: Buffer) => (output += b.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const listening = new Promise<string>((resolveAddress, reject) => {
    const timer = setInterval(() => {
      const match = /tether listening on (127\.0\.0\.1:\d+)/u.exec(output);
      if (match?.[1]) {
        clearInterval(timer);
        resolveAddress(match[1]);
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`exited:\n${output}`));
    });
  });
  listening.catch(() => undefined);
  return { child, exited, listening, output: () => output };
}

describe("the server with MCP servers configured", () => {
  it("refuses an unusable configuration before it listens, naming the entry and field", async () => {
    const run = startMain({
      TETHER_MCP_SERVERS: '[{"name":"ok","command":"node"},{"url":"http://h/mcp"}]',
    });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain("invalid configuration: TETHER_MCP_SERVERS: entry 1: name");
    expect(run.output()).not.toContain("listening");
  }, 30_000);

  it("reports each server's health and runs the demo model's /tool on an MCP tool", async () => {
    const run = startMain({
      TETHER_PROVIDER: "scripted-tools",
      TETHER_MCP_SERVERS: JSON.stringify([
        { name: "everything", command: process.execPath, args: [everythingMain, "stdio"] },
        { name: "down", command: process.execPath, args: ["-e", "process.exit(1)"] },
      ]),
    });
    try {
      const address = await run.listening;
      const transport = createGrpcTransport({ baseUrl: `http://${address}` });
      const health = createClient(Health, transport);
      await waitFor(
        async () =>
          (await health.check({ service: "tether.mcp.everything" })).status === Serving.SERVING,
        { what: "tether.mcp.everything SERVING", intervalMs: 100, detail: run.output },
      );
      expect((await health.check({ service: "tether.mcp.down" })).status).toBe(Serving.NOT_SERVING);
      expect((await health.check({ service: "" })).status).toBe(Serving.SERVING);
      expect((await health.check({ service: "tether.liveness" })).status).toBe(Serving.SERVING);

      const turns = createClient(TurnService, transport);
      let answer = "";
      for await (const r of turns.streamTurn({
        sessionId: "mcp-e2e",
        input: [{ kind: { case: "text", value: '/tool everything__echo {"message":"hi"}' } }],
        options: { serverTools: ["everything"] },
      })) {
        const e = r.event?.event;
        if (e?.case === "turnCompleted" && e.value.outcome?.kind.case === "finished") {
          answer = e.value.outcome.kind.value.value;
        }
      }
      expect(answer).toBe("everything__echo returned Echo: hi");
      expect(run.output()).toContain("MCP servers configured");
    } finally {
      run.child.kill("SIGTERM");
      expect(await run.exited).toBe(0);
    }
  }, 60_000);
});
