// Store benchmark: the Redis store's turn cycle against BullMQ job cycles, redlock lock cycles
// and redis-benchmark's EVALSHA ceiling, all on one throwaway redis-server in the same run.
// Usage: npm run bench:store [-- --sessions N --concurrency C --rounds R --connections K --record]
// `--durability` runs the async vs replicated comparison instead (durability.ts).
// --connections is how many connections the store spreads its calls over (the server's setting
// by default, see src/server/build-store.ts).
// The turn cycle and BullMQ alternate for R rounds and each reports its median round, so a burst
// of load from other processes on the machine lands on both rather than on whichever ran then.
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import type { SessionId } from "../../src/domain/ids.js";
import { createRedisStore } from "../../src/store/redis/redis-store.js";
import { REDIS_EXTRA_CONNECTIONS } from "../../src/server/build-store.js";
import { startRedis } from "../../test/support/redis-harness.js";
import { startRedisProxy } from "../support/redis-proxy.js";
import { printTable, runConcurrently, summarize, type RunStats } from "../support/stats.js";
import { bullmqJobCycles, evalshaCeiling, redlockCycles } from "./peers.js";
import { turnCycle } from "./turn-cycle.js";
import { durabilityBench } from "./durability.js";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "5000" },
    concurrency: { type: "string", default: "32" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: String(1 + REDIS_EXTRA_CONNECTIONS) },
    record: { type: "boolean", default: false },
    durability: { type: "boolean", default: false },
  },
});
const sessions = Number(values.sessions);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

async function turnCycles(port: number, prefix: string, count: number): Promise<RunStats> {
  const redis = new Redis({ host: "127.0.0.1", port, enableAutoPipelining: true });
  const store = createRedisStore({
    redis,
    namespace: "bench",
    extraConnections: connections - 1,
  });
  for (let lane = 0; lane < 4 * connections; lane++) {
    await turnCycle(store, `${prefix}-warmup-${lane}` as SessionId);
  }
  const { latenciesMs, seconds } = await runConcurrently(count, concurrency, (i) =>
    turnCycle(store, `${prefix}-${i}` as SessionId),
  );
  await store.close();
  redis.disconnect();
  return summarize(latenciesMs, seconds);
}

/** Round trips of one cycle, measured through a counting proxy with one cycle in flight. */
async function measureRoundTrips(port: number, cycles: number): Promise<number> {
  const counter = await startRedisProxy(port);
  const redis = new Redis({ host: "127.0.0.1", port: counter.port, enableAutoPipelining: true });
  const store = createRedisStore({ redis, namespace: "bench-rt" });
  await turnCycle(store, "rt-warmup" as SessionId);
  const before = counter.writes();
  for (let i = 0; i < cycles; i++) await turnCycle(store, `rt-${i}` as SessionId);
  const perCycle = (counter.writes() - before) / cycles;
  await store.close();
  redis.disconnect();
  await counter.close();
  return perCycle;
}

async function recordResults(table: string, json: string): Promise<void> {
  const path = "docs/benchmarks.md";
  const current = await readFile(path, "utf8").catch(() => "# Benchmarks\n");
  const section = [
    "## Store",
    "",
    `Measured by \`npm run bench:store -- --record\` on ${new Date().toISOString().slice(0, 10)}`,
    `(${sessions} sessions, concurrency ${concurrency}, ${connections} store connection(s),`,
    `median of ${rounds} alternating rounds,`,
    "one local redis-server, 2 cores).",
    "",
    "```",
    table.trimEnd(),
    json,
    "```",
    "",
  ].join("\n");
  const pattern = /## Store\n[\s\S]*?(?=\n## |$)/;
  const next = pattern.test(current)
    ? current.replace(pattern, section.trimEnd() + "\n")
    : `${current.trimEnd()}\n\n${section}`;
  await writeFile(path, next);
}

async function main(): Promise<void> {
  const started = performance.now();
  const redis = await startRedis();
  try {
    const cycles: RunStats[] = [];
    const bullmqs: RunStats[] = [];
    for (let round = 0; round < rounds; round++) {
      cycles.push(await turnCycles(redis.port, `s${Date.now()}-${round}`, sessions));
      bullmqs.push(await bullmqJobCycles(redis.port, sessions, concurrency));
    }
    const cycle = medianRound(cycles);
    const bullmq = medianRound(bullmqs);
    const redlock = await redlockCycles(redis.port, sessions, concurrency);
    const ceiling = await evalshaCeiling(redis.port, 100_000, concurrency);
    const roundTrips = await measureRoundTrips(redis.port, 50);

    const rows = [
      { run: "tether turn cycle", ...row(cycle) },
      { run: "bullmq job cycle", ...row(bullmq) },
      { run: "redlock lock cycle", ...row(redlock) },
      { run: "evalsha ceiling", ...row(ceiling) },
    ];
    const lines: string[] = [];
    const log = console.log;
    console.log = (line: string) => {
      lines.push(line);
      log(line);
    };
    printTable(rows);
    console.log(`turn cycle / bullmq: ${(cycle.opsPerSecond / bullmq.opsPerSecond).toFixed(2)}x`);
    console.log(
      `turn cycle / evalsha ceiling: ${(cycle.opsPerSecond / ceiling.opsPerSecond).toFixed(2)}x`,
    );
    console.log(`round trips per cycle: ${roundTrips.toFixed(2)}`);
    console.log = log;
    const result = {
      turn_cycle_ops_s: Math.round(cycle.opsPerSecond),
      turn_cycle_p50_ms: round(cycle.p50Ms),
      turn_cycle_p99_ms: round(cycle.p99Ms),
      bullmq_ops_s: Math.round(bullmq.opsPerSecond),
      bullmq_p99_ms: round(bullmq.p99Ms),
      redlock_ops_s: Math.round(redlock.opsPerSecond),
      redlock_p99_ms: round(redlock.p99Ms),
      evalsha_ceiling_ops_s: Math.round(ceiling.opsPerSecond),
      ratio_vs_bullmq: round(cycle.opsPerSecond / bullmq.opsPerSecond),
      round_trips_per_cycle: round(roundTrips),
      turn_cycle_rounds_ops_s: cycles.map((c) => Math.round(c.opsPerSecond)),
      bullmq_rounds_ops_s: bullmqs.map((b) => Math.round(b.opsPerSecond)),
      sessions,
      concurrency,
      connections,
      rounds,
      seconds: round((performance.now() - started) / 1000),
    };
    const json = JSON.stringify(result);
    if (values.record) await recordResults(lines.join("\n"), json);
    console.log(json);
  } finally {
    await redis.stop();
  }
}

/** The round with the median throughput (its latencies come with it). */
function medianRound(runs: RunStats[]): RunStats {
  const sorted = [...runs].sort((a, b) => a.opsPerSecond - b.opsPerSecond);
  return sorted[Math.floor(sorted.length / 2)] as RunStats;
}

function row(s: RunStats): Record<string, number> {
  return { ops_s: Math.round(s.opsPerSecond), p50_ms: round(s.p50Ms), p99_ms: round(s.p99Ms) };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

if (values.durability) await durabilityBench({ sessions, concurrency, rounds });
else await main();
