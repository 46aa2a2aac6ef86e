// A replica started while Redis is unreachable stays up: liveness SERVING, readiness NOT_SERVING,
// turns refused with UNAVAILABLE. Once Redis answers it serves and runs turns without a restart.
// Redis refusing the replica (a wrong password) is a configuration error: the process exits.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { freePort } from "../support/redis-harness.js";
import { waitFor } from "../support/wait-for.js";

const repo = resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function track(child: ChildProcess): ChildProcess & { output: () => string } {
  children.push(child);
  let output = "";
  child.stdout?.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr?.on("data", (b: Buffer) => (output += b.toString()));
  return Object.assign(child, { output: () => output });
}

function startTether(env: Record<string, string>) {
  return track(
    spawn(process.execPath, ["--import", "tsx", join(repo, "src/server/main.ts")], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        TETHER_HOST: "127.0.0.1",
        TETHER_METRICS_PORT: "0",
        TETHER_STORE: "redis",
        TETHER_LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

async function startRedis(port: number, extra: string[] = []): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "tether-late-redis-"));
  dirs.push(dir);
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  track(spawn("redis-server", [...args, ...extra], { stdio: "ignore" }));
  await waitFor(
    () =>
      new Promise<boolean>((resolveConnect) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.destroy();
          resolveConnect(true);
        });
        socket.on("error", () => resolveConnect(false));
      }),
    { what: `redis-server on ${port} to accept connections`, intervalMs: 100 },
  );
}

describe("a replica whose Redis is not there at start", () => {
  it("starts not serving, refuses turns with UNAVAILABLE, and serves once Redis comes up", async () => {
    const [redisPort, port] = [await freePort(), await freePort()];
    const tether = startTether({
      TETHER_PORT: String(port),
      TETHER_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    });
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` });
    const health = createClient(Health, transport);
    const turns = createClient(TurnService, transport);
    const status = (service: string) =>
      health.check({ service }, { timeoutMs: 1_000 }).then((r) => r.status);
    const runTurn = async (text: string) => {
      for await (const m of turns.streamTurn(
        { sessionId: "late-redis", input: [{ kind: { case: "text", value: text } }] },
        { timeoutMs: 10_000 },
      )) {
        if (m.event?.event.case === "turnCompleted") return m.event.event.value.headRevision;
      }
      throw new Error("no turn_completed");
    };

    // Not listening at first: a refused check is asked again.
    await waitFor(
      async () => (await status("tether.liveness").catch(() => undefined)) === Status.SERVING,
      { what: "liveness SERVING", timeoutMs: 30_000, intervalMs: 100, detail: tether.output },
    );
    expect(await status("")).toBe(Status.NOT_SERVING);
    expect(await status("tether.v1.TurnService")).toBe(Status.NOT_SERVING);
    const refused = await runTurn("before Redis").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code, String(refused)).toBe(Code.Unavailable);

    await startRedis(redisPort);
    await waitFor(async () => (await status("").catch(() => undefined)) === Status.SERVING, {
      what: "the server SERVING once Redis is up",
      timeoutMs: 20_000,
      intervalMs: 100,
      detail: tether.output,
    });
    expect(await status("tether.v1.TurnService")).toBe(Status.SERVING);
    // The input created the session at revision 1; its turn commits 2.
    expect(await runTurn("after Redis")).toBe(2n);
    expect(tether.exitCode).toBeNull();
  }, 90_000);

  it("exits with an error naming the cause when Redis refuses its password", async () => {
    const [redisPort, port] = [await freePort(), await freePort()];
    await startRedis(redisPort, ["--requirepass", "the-right-one"]);
    const tether = startTether({
      TETHER_PORT: String(port),
      TETHER_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      TETHER_REDIS_PASSWORD: "a-wrong-one",
    });
    const code = await new Promise<number | null>((r) => tether.once("exit", r));
    expect(code, tether.output()).toBe(1);
    expect(tether.output()).toMatch(/Redis refused the connection/u);
    expect(tether.output()).not.toContain("a-wrong-one");
  }, 60_000);
});
