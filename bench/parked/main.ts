// What a parked turn costs (`npm run bench:parked`): two builds of the same deployment on one
// throwaway redis-server, the demo model with a client tool, driven over gRPC from this process.
// One replica parks a waiting turn at once (TETHER_PARK_AFTER_MS=0); the other never parks
// within the run, so its turns wait in its memory, as before parking existed. Measured in the
// same run, alternating rounds:
//   - resume latency: SubmitToolResults sent -> the turn's next event on the open stream;
//   - bytes in Redis per parked turn (the parked record and its tool-call hash), and the Redis
//     memory the whole waiting session adds;
//   - the replica's memory (V8 heap in use, and resident set) with BENCH_PARKED turns waiting
//     (default 10,000) against with a tenth of them, on the parking replica (flat: it holds
//     nothing per parked turn) and, for a tenth, on the waiting one.
// Prints a table, then one JSON line.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { freePort, startRedis } from "../../test/support/redis-harness.js";
import { percentile, printTable } from "../support/stats.js";
import { startTether, type TetherProcess } from "../turns/server.js";
import { turnClient, type TurnClient } from "../turns/workloads.js";

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = size("BENCH_ROUNDS", 3);
const RESUMES = size("BENCH_RESUMES", 100);
const CONCURRENCY = size("BENCH_CONCURRENCY", 20);
const PARKED = size("BENCH_PARKED", 10_000);

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));
const tool = { name: "lookup", description: "", parametersJsonSchema: '{"type":"object"}' };
const ask = (n: number) => [{ kind: { case: "text" as const, value: `/tool lookup {"n":${n}}` } }];

/**
 * A client per hundred dropped streams: a connection whose client resets many streams is closed
 * by the server's HTTP/2 rapid-reset guard, and a dropped stream is a reset.
 */
function rotatingClient(address: string): () => TurnClient {
  let client = turnClient(address);
  let uses = 0;
  return () => {
    if (++uses % 100 === 0) client = turnClient(address);
    return client;
  };
}

/** Runs `task(i)` for i < count, `lanes` at a time. */
async function inLanes(count: number, lanes: number, task: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/**
 * One waiting turn: opens the stream, waits until the turn waits for the client (parked, or the
 * request shown on a replica that does not park), then, when `answer` is set, answers and times
 * the next event. Without `answer` the stream is dropped and the turn keeps waiting.
 */
async function waitingTurn(
  client: TurnClient,
  sessionId: string,
  n: number,
  parks: boolean,
  answer: boolean,
): Promise<number | undefined> {
  const abort = new AbortController();
  const stream = client.streamTurn(
    { sessionId, input: ask(n), clientTools: [tool] },
    { signal: abort.signal },
  );
  let sentAt = 0;
  let turnId = "";
  let callId = "";
  try {
    for await (const response of stream) {
      const event = response.event;
      if (!event) continue;
      const kind = event.event.case;
      if (kind === "toolCallRequested") {
        turnId = event.turnId;
        callId = event.event.value.callId;
      }
      if (sentAt > 0) return performance.now() - sentAt;
      const waiting = parks ? kind === "turnParked" : kind === "toolCallRequested";
      if (!waiting) continue;
      if (!answer) return undefined;
      sentAt = performance.now();
      await client.submitToolResults({
        sessionId,
        turnId,
        results: [{ callId, output: "ok", isError: false }],
      });
    }
    throw new Error(`${sessionId}: the stream ended before the turn went on`);
  } finally {
    abort.abort();
  }
}

interface Replica extends TetherProcess {
  metricsPort: number;
}

function rssBytes(server: Replica): number {
  const status = readFileSync(`/proc/${server.child.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/u.exec(status)?.[1] ?? 0) * 1024;
}

/**
 * The replica's memory once settled: resident set, and V8 heap in use (the least of a few scrapes
 * of its own metrics, so garbage the collector has not reached yet counts as little as it can).
 */
async function settledMemory(server: Replica): Promise<{ rss: number; heap: number }> {
  let heap = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 6; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
    const used = Number(/^tether_nodejs_heap_size_used_bytes (\d+)/mu.exec(text)?.[1]);
    if (Number.isFinite(used)) heap = Math.min(heap, used);
  }
  return { rss: rssBytes(server), heap };
}

async function startReplica(name: string, env: Record<string, string>, logDir: string) {
  const metricsPort = await freePort();
  const started = await startTether(
    name,
    { ...env, TETHER_METRICS_PORT: String(metricsPort) },
    logDir,
  );
  return Object.assign(started, { metricsPort }) as Replica;
}

async function main(): Promise<void> {
  const logDir = await mkdtemp(join(tmpdir(), "tether-bench-parked-"));
  const redisProcess = await startRedis();
  const redis = new Redis(`redis://127.0.0.1:${redisProcess.port}`);
  const common = {
    TETHER_STORE: "redis",
    TETHER_REDIS_URL: `redis://127.0.0.1:${redisProcess.port}`,
    TETHER_PROVIDER: "scripted-tools",
    TETHER_LOG_LEVEL: "info",
    TETHER_CLIENT_TOOL_TIMEOUT_MS: String(24 * 60 * 60 * 1000),
  };
  const parking = await startReplica("parking", { ...common, TETHER_PARK_AFTER_MS: "0" }, logDir);
  const waiting = await startReplica(
    "waiting",
    { ...common, TETHER_PARK_AFTER_MS: String(24 * 60 * 60 * 1000) },
    logDir,
  );
  const clients = { parking: turnClient(parking.address), waiting: turnClient(waiting.address) };
  const dropping = {
    parking: rotatingClient(parking.address),
    waiting: rotatingClient(waiting.address),
  };
  try {
    // Resume latency, alternating which build goes first each round.
    const latencies: Record<"parking" | "waiting", number[]> = { parking: [], waiting: [] };
    for (let r = 0; r < ROUNDS; r++) {
      const order =
        r % 2 === 0 ? (["parking", "waiting"] as const) : (["waiting", "parking"] as const);
      for (const name of order) {
        await inLanes(RESUMES, CONCURRENCY, async (i) => {
          const ms = await waitingTurn(
            clients[name],
            `resume-${name}-${r}-${i}`,
            i,
            name === "parking",
            true,
          );
          if (ms !== undefined) latencies[name].push(ms);
        });
      }
    }

    // Bytes per parked turn: its record and tool-call hash, and the Redis memory per session.
    const sample = Math.min(1_000, Math.max(1, Math.floor(PARKED / 10)));
    const beforeRedis = Number(/used_memory:(\d+)/u.exec(await redis.info("memory"))?.[1]);
    const parkingBase = await settledMemory(parking);
    const startedParking = performance.now();
    await inLanes(sample, 50, async (i) => {
      await waitingTurn(dropping.parking(), `parked-${i}`, i, true, false);
    });
    const afterSampleRedis = Number(/used_memory:(\d+)/u.exec(await redis.info("memory"))?.[1]);
    const parkingTenth = await settledMemory(parking);
    let recordBytes = 0;
    for (let i = 0; i < 20; i++) {
      const keys = await redis.keys(`tether:{default:parked-${i}}:*`);
      for (const key of keys.filter((k) => k.endsWith(":parked") || k.includes(":tool-calls:"))) {
        recordBytes += Number(await redis.memory("USAGE", key));
      }
    }
    await inLanes(PARKED - sample, 50, async (i) => {
      await waitingTurn(dropping.parking(), `parked-${sample + i}`, i, true, false);
    });
    const parkSeconds = (performance.now() - startedParking) / 1000;
    const parkingAll = await settledMemory(parking);

    // The same tenth waiting on the replica that does not park: what it holds per waiting turn.
    const waitingBase = await settledMemory(waiting);
    await inLanes(sample, 50, async (i) => {
      await waitingTurn(dropping.waiting(), `held-${i}`, i, false, false);
    });
    const waitingTenth = await settledMemory(waiting);

    const p = (xs: number[], q: number) => round(percentile(sorted(xs), q));
    const mb = (bytes: number) => round(bytes / 2 ** 20, 1);
    const perTurn = (bytes: number, turns: number) => Math.round(bytes / Math.max(1, turns));
    const result = {
      resumes_per_build: latencies.parking.length,
      resume_p50_ms: p(latencies.parking, 50),
      resume_p99_ms: p(latencies.parking, 99),
      unparked_answer_p50_ms: p(latencies.waiting, 50),
      unparked_answer_p99_ms: p(latencies.waiting, 99),
      parked_record_bytes: Math.round(recordBytes / 20),
      redis_bytes_per_waiting_session: Math.round((afterSampleRedis - beforeRedis) / sample),
      parked_turns: PARKED,
      parked_per_s: round(PARKED / parkSeconds),
      replica_heap_mb_base: mb(parkingBase.heap),
      replica_heap_mb_at_tenth: mb(parkingTenth.heap),
      replica_heap_mb_at_all: mb(parkingAll.heap),
      parked_heap_bytes_per_turn_tenth_to_all: perTurn(
        parkingAll.heap - parkingTenth.heap,
        PARKED - sample,
      ),
      replica_rss_mb_at_tenth: mb(parkingTenth.rss),
      replica_rss_mb_at_all: mb(parkingAll.rss),
      unparked_heap_bytes_per_waiting_turn: perTurn(waitingTenth.heap - waitingBase.heap, sample),
      unparked_rss_bytes_per_waiting_turn: perTurn(waitingTenth.rss - waitingBase.rss, sample),
    };
    printTable(Object.entries(result).map(([measure, value]) => ({ measure, value })));
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    process.exitCode = 1;
    throw error;
  } finally {
    await Promise.allSettled([parking.stop(), waiting.stop()]);
    redis.disconnect();
    await redisProcess.stop();
    if (process.exitCode === undefined) await rm(logDir, { recursive: true, force: true });
    else process.stderr.write(`replica logs kept in ${logDir}\n`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:parked failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
