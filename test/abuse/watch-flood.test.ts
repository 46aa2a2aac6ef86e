// Probe: one tenant floods the service with WatchSession streams (issue 40, item 4). The real
// server runs on a Redis of its own whose `maxclients` (200) is below the flood: when each watch
// held a Redis connection, tenant A's watches took every client Redis had and tenant B's calls
// failed. Now A is refused past its concurrent_streams quota (default 256 per replica), the
// server's Redis clients stay a handful however many watches are open, and B's turn, quota read
// and watch go on. Bounded: 600 watch attempts, loopback only.
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { QuotaFailureSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { QuotaLimitKind, QuotaService } from "../../src/gen/tether/v1/quota_service_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { freePort, startRedis, type RedisProcess } from "../support/redis-harness.js";
import { waitFor } from "../support/wait-for.js";

const repo = resolve(import.meta.dirname, "../..");
const ATTEMPTS = 600;
/** The default concurrent_streams quota (src/domain/quotas.ts), stated here as the test expects it. */
const STREAM_QUOTA = 256;
/** Streams per client connection, well under any HTTP/2 concurrent-stream limit. */
const PER_CONNECTION = 50;

const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const text = (value: string) => [{ kind: { case: "text" as const, value } }];

/** Clients the Redis server holds now (the test's own connection included). */
async function redisClients(conn: Redis): Promise<number> {
  const list = (await conn.client("LIST")) as string;
  return list.split("\n").filter((line) => line.trim() !== "").length;
}

describe("a WatchSession flood from one tenant", () => {
  let redis: RedisProcess;
  let admin: Redis;
  let child: ChildProcess;
  let output = "";
  let baseUrl: string;
  const transports: Transport[] = [];
  const transport = (i: number): Transport => {
    const at = Math.floor(i / PER_CONNECTION);
    transports[at] ??= createGrpcTransport({ baseUrl });
    return transports[at];
  };

  beforeAll(async () => {
    redis = await startRedis(["--maxclients", "200"]);
    admin = new Redis({ host: "127.0.0.1", port: redis.port });
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ["--import", "tsx", join(repo, "src/server/main.ts")], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        TETHER_HOST: "127.0.0.1",
        TETHER_PORT: String(port),
        TETHER_METRICS_PORT: "0",
        TETHER_PROVIDER: "echo",
        TETHER_STORE: "redis",
        TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}`,
        TETHER_API_KEYS: "key-a=a,key-b=b",
        TETHER_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (b: Buffer) => (output += b.toString()));
    child.stderr?.on("data", (b: Buffer) => (output += b.toString()));
    const health = createClient(Health, createGrpcTransport({ baseUrl }));
    let status: Status | undefined;
    await waitFor(
      async () => {
        status = await health
          .check({ service: "" }, { timeoutMs: 1_000 })
          .then((r) => r.status)
          .catch(() => undefined);
        return status === Status.SERVING || child.exitCode !== null;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: "the server to serve" },
    ).catch(() => undefined);
    expect(status, output).toBe(Status.SERVING);
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    }
    admin?.disconnect();
    await redis?.stop();
  });

  /** Runs a turn to its end; the cursors of its events. */
  async function turn(key: string, sessionId: string, transportOf = transport(0)) {
    const cursors: bigint[] = [];
    const turns = createClient(TurnService, transportOf);
    for await (const r of turns.streamTurn({ sessionId, input: text("hello") }, auth(key))) {
      if (r.event) cursors.push(r.event.cursor);
    }
    return cursors;
  }

  it("refuses A past its quota, keeps Redis clients bounded, and B is answered and watches on", async () => {
    const aCursors = await turn("key-a", "a-1");
    const bCursors = await turn("key-b", "b-1");
    const stop = new AbortController();

    // B watches its session from its last event: it idles, waiting on the log.
    const bWatch = createClient(TurnService, transport(0))
      .watchSession(
        { sessionId: "b-1", afterCursor: bCursors.at(-1) ?? 0n },
        { ...auth("key-b"), signal: stop.signal },
      )
      [Symbol.asyncIterator]();
    const bNext = bWatch.next();
    bNext.catch(() => undefined);
    const baseline = await redisClients(admin);

    // A opens its watches one event before its session's end: each receives that event (so it is
    // open on the server), then idles on a blocking read of the log.
    let peak = baseline;
    const attempts = Array.from({ length: ATTEMPTS }, (_, i) =>
      createClient(TurnService, transport(PER_CONNECTION + i))
        .watchSession(
          { sessionId: "a-1", afterCursor: aCursors.at(-2) ?? 0n },
          { ...auth("key-a"), signal: stop.signal },
        )
        [Symbol.asyncIterator]()
        .next()
        .then(
          () => "open" as const,
          (error: unknown) => error,
        ),
    );
    const outcomes = await Promise.all(attempts);
    // The watches arm their blocking reads just after their first event: wait until Redis sees
    // a reader connection more than before the flood (armed), rather than sampling for a while.
    peak = Math.max(
      peak,
      await waitFor(
        async () => {
          const clients = await redisClients(admin);
          return clients > baseline ? clients : 0;
        },
        { what: "the watches' blocking reads to reach Redis" },
      ),
    );

    // Redis holds at most the log's four shared readers more than before the flood (each watch
    // held a client of its own before: the flood then reached Redis's maxclients).
    expect(peak, output).toBeLessThanOrEqual(baseline + 4);
    const open = outcomes.filter((o) => o === "open").length;
    const refusals = outcomes.filter((o): o is ConnectError => o instanceof ConnectError);
    expect(open, output).toBe(STREAM_QUOTA);
    expect(refusals).toHaveLength(ATTEMPTS - STREAM_QUOTA);
    for (const refusal of refusals) expect(refusal.code).toBe(Code.ResourceExhausted);
    const violation = refusals[0]?.findDetails(QuotaFailureSchema)[0]?.violations[0];
    expect(violation?.quotaId).toBe("concurrent_streams");
    expect(violation?.subject).toBe("a");

    // B is answered: its quota read (A's count is not B's), a turn, and its watch's events.
    const quotas = createClient(QuotaService, transport(0));
    const streamsOf = async (key: string) =>
      (await quotas.getQuotaUsage({}, auth(key))).limits.find(
        (l) => l.kind === QuotaLimitKind.CONCURRENT_STREAMS,
      )?.used;
    expect(await streamsOf("key-a")).toBe(BigInt(STREAM_QUOTA));
    expect(await streamsOf("key-b")).toBe(1n);
    const second = await turn("key-b", "b-1");
    expect(second.length).toBeGreaterThan(0);
    const seen = await bNext;
    expect(seen.done).toBe(false);
    expect(seen.value?.event?.cursor).toBeGreaterThan(bCursors.at(-1) ?? 0n);
    // 257 watches open on the replica (A's and B's) and B's turn ran: still the same bound.
    expect(await redisClients(admin)).toBeLessThanOrEqual(baseline + 4);
    stop.abort();
  }, 120_000);
});
