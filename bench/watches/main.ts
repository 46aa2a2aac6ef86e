// What open WatchSession streams cost a replica on Redis (issue 40, item 4): the real server
// (src/server/main.ts in a child process) on a Redis server of its own; SESSIONS sessions get one
// turn each, then WATCHES watches idle on them (WATCHES / SESSIONS per session, from 50-stream
// client connections). Reports the Redis server's clients (CLIENT LIST) and the replica's RSS
// before and after, and how long a new turn's events take to reach every watch of its session.
// The stream quota is raised for the run (concurrent_streams is what the flood would hit first).
//   npx tsx bench/watches/main.ts [watches=2000] [sessions=200]
import { spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Redis } from "ioredis";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { freePort, startRedis } from "../../test/support/redis-harness.js";

const WATCHES = Number(process.argv[2] ?? 2000);
const SESSIONS = Number(process.argv[3] ?? 200);
const PER_CONNECTION = 50;
const repo = resolve(import.meta.dirname, "../..");
const text = (value: string) => [{ kind: { case: "text" as const, value } }];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const redis = await startRedis();
const admin = new Redis({ host: "127.0.0.1", port: redis.port });
const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
const child = spawn(process.execPath, ["--import", "tsx", join(repo, "src/server/main.ts")], {
  cwd: repo,
  env: {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    TETHER_HOST: "127.0.0.1",
    TETHER_PORT: String(port),
    TETHER_METRICS_PORT: "0",
    TETHER_PROVIDER: "echo",
    TETHER_STORE: "redis",
    TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}`,
    TETHER_LOG_LEVEL: "warn",
    // Unset against a tree without the stream quota (its config refuses the name).
    ...(process.env.BENCH_NO_STREAM_QUOTA
      ? {}
      : { TETHER_QUOTAS: JSON.stringify({ default: { concurrent_streams: WATCHES + 10 } }) }),
  },
  stdio: ["ignore", "inherit", "inherit"],
});

const clients = async (): Promise<number> =>
  ((await admin.client("LIST")) as string).split("\n").filter((l) => l.trim() !== "").length;
const rssMb = (): number => {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/u.exec(status)?.[1] ?? 0) / 1024);
};

const transports: Transport[] = [];
const transport = (i: number): Transport =>
  (transports[Math.floor(i / PER_CONNECTION)] ??= createGrpcTransport({ baseUrl }));

try {
  const health = createClient(Health, transport(0));
  for (let i = 0; ; i++) {
    const status = await health
      .check({ service: "" }, { timeoutMs: 1_000 })
      .then((r) => r.status)
      .catch(() => undefined);
    if (status === Status.SERVING) break;
    if (i > 300) throw new Error("the server did not start");
    await sleep(100);
  }
  console.error("serving");
  const turns = createClient(TurnService, transport(0));
  /** Each session's cursor one event before its end: a watch from there receives one event. */
  const startAt = new Map<string, bigint>();
  for (let s = 0; s < SESSIONS; s++) {
    const cursors: bigint[] = [];
    for await (const r of turns.streamTurn({ sessionId: `s-${s}`, input: text("hello") })) {
      if (r.event) cursors.push(r.event.cursor);
    }
    startAt.set(`s-${s}`, cursors.at(-2) ?? 0n);
  }
  console.error("turns done");
  await sleep(1_000);
  const before = { clients: await clients(), rssMb: rssMb() };

  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const watches = Array.from({ length: WATCHES }, (_, i) => {
    const sessionId = `s-${i % SESSIONS}`;
    return createClient(TurnService, transport(PER_CONNECTION + i))
      .watchSession(
        { sessionId, afterCursor: startAt.get(sessionId) ?? 0n },
        { signal: stop.signal },
      )
      [Symbol.asyncIterator]();
  });
  // Every watch received its first event: it is open on the server, and then waits.
  const openedAt = performance.now();
  await Promise.all(watches.map((it) => it.next()));
  const openMs = Math.round(performance.now() - openedAt);
  console.error("watches opened");
  await sleep(3_000);
  const after = { clients: await clients(), rssMb: rssMb() };
  const firstEvents = watches
    .filter((_, i) => i % SESSIONS === 0)
    .map((it) => it.next().then(() => performance.now()));
  for (const it of watches.filter((_, i) => i % SESSIONS !== 0)) void it.next().catch(() => 0);
  const opened = watches;

  // A turn on the first session: how long until each of its watches has the turn's first event.
  const started = performance.now();
  for await (const _ of turns.streamTurn({ sessionId: "s-0", input: text("again") }));
  const reached = await Promise.race([
    Promise.all(firstEvents),
    sleep(30_000).then(() => undefined),
  ]);
  const deliveryMs = reached ? Math.round(Math.max(...reached) - started) : "timed out";
  stop.abort();

  const report = {
    watches: opened.length,
    sessions: SESSIONS,
    allOpenMs: openMs,
    redisClientsBefore: before.clients,
    redisClientsAfter: after.clients,
    rssMbBefore: before.rssMb,
    rssMbAfter: after.rssMb,
    lastWatchOfSessionMs: deliveryMs,
  };
  console.table([report]);
  console.log(JSON.stringify(report));
} finally {
  child.kill("SIGKILL");
  admin.disconnect();
  await redis.stop();
  process.exit(0);
}
