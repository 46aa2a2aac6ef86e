// A replica configured with TETHER_REDIS_SENTINELS finds the primary through Sentinel, runs turns
// on it, and after a failover (SENTINEL FAILOVER, then the primary killed) keeps running turns on
// the promoted replica without a restart.
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import { freePort } from "../support/redis-harness.js";
import { startSentinelTopology, type SentinelTopology } from "../support/sentinel-topology.js";
import { waitFor } from "../support/wait-for.js";

const repo = resolve(import.meta.dirname, "../..");
let topology: SentinelTopology;
let tether: ChildProcess | undefined;
let output = "";

beforeAll(async () => {
  topology = await startSentinelTopology(2);
}, 90_000);

afterAll(async () => {
  if (tether && tether.exitCode === null && tether.signalCode === null) {
    const exited = new Promise((r) => tether?.once("exit", r));
    tether.kill("SIGKILL");
    await exited;
  }
  await topology.stop();
});

function startTether(port: number, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", join(repo, "src/server/main.ts")], {
    cwd: repo,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TETHER_HOST: "127.0.0.1",
      TETHER_PORT: String(port),
      TETHER_METRICS_PORT: "0",
      TETHER_STORE: "redis",
      TETHER_LOG_LEVEL: "info",
      TETHER_REDIS_SENTINELS: topology.sentinels.map((s) => `${s.host}:${s.port}`).join(","),
      TETHER_REDIS_SENTINEL_MASTER: topology.masterName,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr?.on("data", (b: Buffer) => (output += b.toString()));
  return child;
}

describe("Redis through Sentinel", () => {
  it("serves turns, and keeps serving them after a failover and after the primary dies, without a restart or a lost acknowledgement", async () => {
    const port = await freePort();
    // Every acknowledgement waits for both replicas, so whichever one Sentinel promotes has it.
    tether = startTether(port, {
      TETHER_REDIS_DURABILITY: "replicated",
      TETHER_REDIS_MIN_REPLICAS: "2",
      TETHER_REDIS_WAIT_TIMEOUT_MS: "1000",
    });
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` });
    const health = createClient(Health, transport);
    const turns = createClient(TurnService, transport);
    // The request id makes a retried submission the same input, so a retry whose first attempt
    // did land cannot add a turn; the revisions below are exact.
    const runTurn = async (sessionId: string, text: string) => {
      for await (const m of turns.streamTurn(
        {
          sessionId,
          clientRequestId: `${sessionId}/${text.replace(/\s+/gu, "-")}`,
          input: [{ kind: { case: "text", value: text } }],
        },
        { timeoutMs: 10_000 },
      )) {
        if (m.event?.event.case === "turnCompleted") return m.event.event.value.headRevision;
      }
      throw new Error("no turn_completed");
    };
    await waitFor(
      () =>
        health.check({ service: "" }, { timeoutMs: 1_000 }).then(
          (r) => r.status === Status.SERVING,
          () => false,
        ),
      { timeoutMs: 30_000, intervalMs: 100, what: `the replica to serve\n${output}` },
    );
    const firstPrimary = await topology.primaryPort();
    expect(await runTurn("through-sentinel", "hello")).toBe(2n);

    const promoted = await topology.failover();
    expect(promoted).not.toBe(firstPrimary);
    // The same process, never restarted: the first turn after the failover may meet the old
    // primary (now a replica) and be refused READONLY before the client moves, so it is retried
    // as a client would; the session's history shows the earlier turn survived the failover.
    const after = await waitFor(
      () => runTurn("through-sentinel", "after failover").catch(() => undefined),
      { timeoutMs: 30_000, intervalMs: 200, what: `a turn after the failover\n${output}` },
    );
    expect(after).toBe(3n);
    expect(await runTurn("fresh-after-failover", "hi")).toBe(2n);

    // Now the primary dies outright: Sentinel sees it down and promotes a replica. Both replicas
    // had confirmed revision 3, so it survives whichever is promoted.
    const killed = await topology.primaryPort();
    const survivor = await topology.killPrimary();
    expect(killed).toBe(promoted);
    expect(survivor).not.toBe(killed);
    const sessions = createClient(SessionService, transport);
    const read = () => sessions.getSession({ sessionId: "through-sentinel" }, { timeoutMs: 2_000 });
    // One replica left, two required: a read cannot be confirmed either (what it sees could
    // still be taken back by a failover), and says why, once the process's connections have
    // moved to the new primary (calls may first fail as outages).
    const unconfirmedRead = await waitFor(
      () =>
        read().then(
          () => undefined,
          (e: unknown) => (String(e).includes("what the read saw") ? e : undefined),
        ),
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: `a read refused naming the durability\n${output}`,
      },
    );
    expect((unconfirmedRead as ConnectError).code).toBe(Code.Unavailable);
    expect(String(unconfirmedRead)).toContain('durability "replicated"');
    // Nor can an acknowledgement be given, and it says why.
    const refused = await waitFor(
      () =>
        runTurn("through-sentinel", "with one replica").then(
          () => "acknowledged",
          (e: unknown) => (String(e).includes('durability "replicated"') ? e : undefined),
        ),
      { timeoutMs: 30_000, intervalMs: 200, what: `a refusal naming the durability\n${output}` },
    );
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.Unavailable);
    // The dead node comes back as a replica: the same process acknowledges again, and the
    // retried input (same request id) lands once, at the next revision.
    await topology.revive(killed);
    // Reads answer again, and revision 3 is there (the refused input's turn may follow it).
    const head = await waitFor(
      () =>
        read().then(
          (r) => r.session?.headRevision,
          () => undefined,
        ),
      { timeoutMs: 30_000, intervalMs: 200, what: `a read after the node returned\n${output}` },
    );
    expect(head).toBeGreaterThanOrEqual(3n);
    const afterKill = await waitFor(
      () => runTurn("through-sentinel", "with one replica").catch(() => undefined),
      { timeoutMs: 30_000, intervalMs: 200, what: `a turn after the node returned\n${output}` },
    );
    expect(afterKill).toBe(4n);
    expect(tether.exitCode).toBeNull();
  }, 120_000);
});
