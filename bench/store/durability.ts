// Durability benchmark (ADR 0017): the store's turn cycle, and a read of each session it made,
// with TETHER_REDIS_DURABILITY=async and =replicated on the same primary with one replica,
// alternating rounds in one run, so the price of WAIT behind every acknowledging script (and of
// the mark and WAIT behind every read of acknowledged state) is read against its own peer.
// Usage: npm run bench:store -- --durability [--sessions N --concurrency C --rounds R]
import { Redis } from "ioredis";
import type { SessionId } from "../../src/domain/ids.js";
import { createRedisStore } from "../../src/store/redis/redis-store.js";
import type { RedisDurability } from "../../src/store/redis/durability.js";
import { REDIS_EXTRA_CONNECTIONS } from "../../src/server/build-store.js";
import {
  startRedis,
  waitForReplicasOnline,
  type RedisProcess,
} from "../../test/support/redis-harness.js";
import { printTable, runConcurrently, summarize, type RunStats } from "../support/stats.js";
import { turnCycle } from "./turn-cycle.js";

export interface DurabilityBenchOptions {
  sessions: number;
  concurrency: number;
  rounds: number;
}

const MODES: Record<"async" | "replicated", RedisDurability> = {
  async: { mode: "async" },
  replicated: { mode: "replicated", minReplicas: 1, timeoutMs: 1_000 },
};

async function cycles(
  port: number,
  durability: RedisDurability,
  prefix: string,
  options: DurabilityBenchOptions,
): Promise<{ cycle: RunStats; read: RunStats }> {
  const redis = new Redis({ host: "127.0.0.1", port, enableAutoPipelining: true });
  const store = createRedisStore({
    redis,
    namespace: "bench-durability",
    extraConnections: REDIS_EXTRA_CONNECTIONS,
    durability,
  });
  for (let lane = 0; lane < 8; lane++) await turnCycle(store, `${prefix}-w${lane}` as SessionId);
  const cycle = await runConcurrently(options.sessions, options.concurrency, (i) =>
    turnCycle(store, `${prefix}-${i}` as SessionId),
  );
  const read = await runConcurrently(options.sessions, options.concurrency, async (i) => {
    if (!(await store.loadSession(`${prefix}-${i}` as SessionId))) throw new Error("no session");
  });
  await store.close();
  redis.disconnect();
  return {
    cycle: summarize(cycle.latenciesMs, cycle.seconds),
    read: summarize(read.latenciesMs, read.seconds),
  };
}

function median(runs: RunStats[]): RunStats {
  return [...runs].sort((a, b) => a.opsPerSecond - b.opsPerSecond)[
    Math.floor(runs.length / 2)
  ] as RunStats;
}

export async function durabilityBench(options: DurabilityBenchOptions): Promise<void> {
  const started = performance.now();
  const nodes: RedisProcess[] = [];
  try {
    const primary = await startRedis(["--repl-diskless-sync-delay", "0"]);
    nodes.push(primary);
    nodes.push(await startRedis(["--replicaof", "127.0.0.1", String(primary.port)]));
    await waitForReplicasOnline([primary.port], 1, 30_000);
    const runs: Record<keyof typeof MODES, RunStats[]> = { async: [], replicated: [] };
    const reads: Record<keyof typeof MODES, RunStats[]> = { async: [], replicated: [] };
    for (let round = 0; round < options.rounds; round++) {
      for (const mode of ["async", "replicated"] as const) {
        const prefix = `${mode}-${Date.now()}-${round}`;
        const measured = await cycles(primary.port, MODES[mode], prefix, options);
        runs[mode].push(measured.cycle);
        reads[mode].push(measured.read);
      }
    }
    const a = median(runs.async);
    const r = median(runs.replicated);
    const ra = median(reads.async);
    const rr = median(reads.replicated);
    const row = (s: RunStats) => ({
      ops_s: Math.round(s.opsPerSecond),
      p50_ms: Math.round(s.p50Ms * 100) / 100,
      p99_ms: Math.round(s.p99Ms * 100) / 100,
    });
    printTable([
      { run: "turn cycle, async", ...row(a) },
      { run: "turn cycle, replicated (WAIT 1)", ...row(r) },
      { run: "session read, async", ...row(ra) },
      { run: "session read, replicated (mark + WAIT 1)", ...row(rr) },
    ]);
    console.log(`replicated / async: ${(r.opsPerSecond / a.opsPerSecond).toFixed(2)}x`);
    console.log(`reads, replicated / async: ${(rr.opsPerSecond / ra.opsPerSecond).toFixed(2)}x`);
    console.log(
      JSON.stringify({
        async_ops_s: Math.round(a.opsPerSecond),
        async_p99_ms: row(a).p99_ms,
        replicated_ops_s: Math.round(r.opsPerSecond),
        replicated_p99_ms: row(r).p99_ms,
        ratio_replicated_vs_async: Math.round((r.opsPerSecond / a.opsPerSecond) * 100) / 100,
        read_async_ops_s: Math.round(ra.opsPerSecond),
        read_replicated_ops_s: Math.round(rr.opsPerSecond),
        read_replicated_p99_ms: row(rr).p99_ms,
        ratio_read_replicated_vs_async: Math.round((rr.opsPerSecond / ra.opsPerSecond) * 100) / 100,
        async_rounds_ops_s: runs.async.map((s) => Math.round(s.opsPerSecond)),
        replicated_rounds_ops_s: runs.replicated.map((s) => Math.round(s.opsPerSecond)),
        ...options,
        seconds: Math.round((performance.now() - started) / 10) / 100,
      }),
    );
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
  }
}
