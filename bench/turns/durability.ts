// Redis durability async against replicated (ADR 0017), end to end and in the same run: two built
// servers on one throwaway primary with one replica, one with TETHER_REDIS_DURABILITY=async, one
// with =replicated and MIN_REPLICAS=1 (WAIT behind every acknowledging script). Rounds alternate
// which server goes first, as in tracing.ts, so load from other processes lands on both.
// Part of bench:turns; run alone with `npm run bench:turns:durability` (sizes: BENCH_DURABILITY_*).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  startRedis,
  waitForReplicasOnline,
  type RedisProcess,
} from "../../test/support/redis-harness.js";
import { percentile, printTable } from "../support/stats.js";
import { startTether, type TetherProcess } from "./server.js";
import { concurrentTurns, sequentialTurns, turnClient, type TurnClient } from "./workloads.js";

type Mode = "async" | "replicated";

export interface DurabilityComparison {
  sessions: number;
  turns_each: number;
  rounds: number;
  async_turns_s: number;
  replicated_turns_s: number;
  /** Median over rounds of each round's per-turn completion percentiles. */
  async_p50_ms: number;
  async_p99_ms: number;
  replicated_p50_ms: number;
  replicated_p99_ms: number;
  /** replicated / async turns/s: 1 means waiting for the replica costs nothing measurable. */
  replicated_vs_async: number;
  replicated_vs_async_range: [number, number];
}

export interface DurabilityOptions {
  rounds: number;
  sessions: number;
  turnsEach: number;
  warmup: number;
  logDir: string;
}

const sortedOf = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: readonly number[]) => percentile(sortedOf(xs), 50);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

async function startPrimaryWithReplica(nodes: RedisProcess[]): Promise<number> {
  const primary = await startRedis(["--repl-diskless-sync-delay", "0"]);
  nodes.push(primary);
  nodes.push(await startRedis(["--replicaof", "127.0.0.1", String(primary.port)]));
  await waitForReplicasOnline([primary.port], 1, 30_000);
  return primary.port;
}

export async function compareDurability(options: DurabilityOptions): Promise<DurabilityComparison> {
  const nodes: RedisProcess[] = [];
  const servers: TetherProcess[] = [];
  try {
    const port = await startPrimaryWithReplica(nodes);
    const redis = { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${port}` };
    const env: Record<Mode, Record<string, string>> = {
      async: { ...redis, TETHER_REDIS_DURABILITY: "async" },
      replicated: {
        ...redis,
        TETHER_REDIS_DURABILITY: "replicated",
        TETHER_REDIS_MIN_REPLICAS: "1",
        TETHER_REDIS_WAIT_TIMEOUT_MS: "1000",
      },
    };
    const clients = {} as Record<Mode, TurnClient>;
    for (const mode of ["async", "replicated"] as const) {
      const server = await startTether(`durability-${mode}`, env[mode], options.logDir);
      servers.push(server);
      clients[mode] = turnClient(server.address);
      await sequentialTurns(clients[mode], `warm-durability-${mode}`, options.warmup);
    }
    const perRound: Record<Mode, { turnsS: number[]; p50: number[]; p99: number[] }> = {
      async: { turnsS: [], p50: [], p99: [] },
      replicated: { turnsS: [], p50: [], p99: [] },
    };
    const ratios: number[] = [];
    for (let r = 0; r < options.rounds; r++) {
      const order =
        r % 2 === 0 ? (["async", "replicated"] as const) : (["replicated", "async"] as const);
      const rate: Partial<Record<Mode, number>> = {};
      for (const mode of order) {
        const result = await concurrentTurns(
          clients[mode],
          `durability-${mode}-${Date.now()}-${r}`,
          options.sessions,
          options.turnsEach,
        );
        const ms = sortedOf(result.timings.map((t) => t.ms));
        rate[mode] = result.turnsS;
        perRound[mode].turnsS.push(result.turnsS);
        perRound[mode].p50.push(percentile(ms, 50));
        perRound[mode].p99.push(percentile(ms, 99));
      }
      ratios.push((rate.replicated ?? 0) / (rate.async ?? 1));
    }
    const sortedRatios = sortedOf(ratios);
    return {
      sessions: options.sessions,
      turns_each: options.turnsEach,
      rounds: options.rounds,
      async_turns_s: round(median(perRound.async.turnsS)),
      replicated_turns_s: round(median(perRound.replicated.turnsS)),
      async_p50_ms: round(median(perRound.async.p50)),
      async_p99_ms: round(median(perRound.async.p99)),
      replicated_p50_ms: round(median(perRound.replicated.p50)),
      replicated_p99_ms: round(median(perRound.replicated.p99)),
      replicated_vs_async: round(median(ratios), 3),
      replicated_vs_async_range: [
        round(sortedRatios[0] ?? Number.NaN, 3),
        round(sortedRatios.at(-1) ?? Number.NaN, 3),
      ],
    };
  } finally {
    for (const server of servers) await server.stop();
    await Promise.all(nodes.map((n) => n.stop()));
  }
}

export function printDurability(c: DurabilityComparison): void {
  console.log(
    `redis durability replicated (WAIT 1) vs async: ${c.sessions} sessions x ${c.turns_each} turns, median of ${c.rounds} alternating rounds (primary + 1 replica)`,
  );
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  printTable([
    {
      measure: "turns/s",
      async: c.async_turns_s.toFixed(0),
      replicated: c.replicated_turns_s.toFixed(0),
      "replicated/async": c.replicated_vs_async.toFixed(3),
    },
    {
      measure: "turn completion p50",
      async: `${c.async_p50_ms.toFixed(1)} ms`,
      replicated: `${c.replicated_p50_ms.toFixed(1)} ms`,
      "replicated/async": ratio(c.replicated_p50_ms, c.async_p50_ms),
    },
    {
      measure: "turn completion p99",
      async: `${c.async_p99_ms.toFixed(1)} ms`,
      replicated: `${c.replicated_p99_ms.toFixed(1)} ms`,
      "replicated/async": ratio(c.replicated_p99_ms, c.async_p99_ms),
    },
  ]);
}

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

export function durabilityOptionsFromEnv(logDir: string): DurabilityOptions {
  return {
    rounds: size("BENCH_DURABILITY_ROUNDS", 5),
    sessions: size("BENCH_DURABILITY_SESSIONS", 50),
    turnsEach: size("BENCH_DURABILITY_TURNS_EACH", 4),
    warmup: size("BENCH_WARMUP", 20),
    logDir,
  };
}

async function standalone(): Promise<void> {
  const logDir = await mkdtemp(join(tmpdir(), "tether-bench-durability-"));
  try {
    const comparison = await compareDurability(durabilityOptionsFromEnv(logDir));
    printDurability(comparison);
    console.log(
      JSON.stringify({ bench: "turns.durability", ...comparison, node: process.version }),
    );
  } finally {
    await rm(logDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  standalone().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
