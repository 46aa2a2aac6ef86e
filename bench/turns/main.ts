// Turn benchmark, end to end: the built server (dist/) in child processes, one on the memory
// store and one on a throwaway redis-server, driven over gRPC (h2c) from this process. Rounds
// alternate the two servers workload by workload, so load from other processes lands on both.
// Then a third server, whose Redis connections go through a counting proxy, runs the same kinds
// of turns to count Redis commands and round trips per turn (the proxy stays out of the timed
// runs). Last, tracing on against off (bench/turns/tracing.ts) and Redis durability replicated
// against async (bench/turns/durability.ts). CPU per turn (each server's, and the redis-server's
// own) is read around the concurrent workloads, and memory per idle session measured on both
// timed servers before they stop (bench/turns/resources.ts). Prints tables, then one JSON line.
// Sizes: the BENCH_* variables below.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startRedis } from "../../test/support/redis-harness.js";
import { percentile, printTable } from "../support/stats.js";
import { countCommands, type CountReport } from "./counts.js";
import {
  compareDurability,
  durabilityOptionsFromEnv,
  printDurability,
  type DurabilityComparison,
} from "./durability.js";
import { countRenewals, type RenewalCount } from "./renewals.js";
import {
  createCpuMeter,
  printResources,
  resourceFigures,
  heapSnapshotArgs,
  memoryPerIdleSession,
  type CpuSubject,
  type IdleSessionMemory,
} from "./resources.js";
import { startTether, type TetherProcess } from "./server.js";
import {
  compareTracing,
  printTracing,
  tracingOptionsFromEnv,
  type TracingComparison,
} from "./tracing.js";
import {
  concurrentTurns,
  enqueuedInputs,
  sequentialTurns,
  turnClient,
  type TurnClient,
  type TurnTiming,
} from "./workloads.js";

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = size("BENCH_ROUNDS", 5);
const WARMUP = size("BENCH_WARMUP", 20);
const SEQ_TURNS = size("BENCH_SEQ_TURNS", 100);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? "50,200").split(",").map(Number);
const TURNS_EACH = size("BENCH_TURNS_EACH", 4);
const ENQUEUED = size("BENCH_ENQUEUED", 20);
const LONG_TURNS = size("BENCH_LONG_TURNS", 1000);
const LONG_SAMPLE = size("BENCH_LONG_SAMPLE", 20);
const COUNT_TURNS = size("BENCH_COUNT_TURNS", 50);
const IDLE_TURNS = size("BENCH_IDLE_TURNS", 20);
/** Leases held at once while renewals are counted, for how long, under which lease TTL. */
const RENEW_LEASES = size("BENCH_RENEW_LEASES", 50);
const RENEW_HOLD_MS = size("BENCH_RENEW_HOLD_MS", 3000);
const RENEW_TTL_MS = size("BENCH_RENEW_TTL_MS", 900);
/** New sessions, one turn each and then idle, over which RSS per idle session is measured. */
const IDLE_SESSIONS = size("BENCH_IDLE_SESSIONS", 1000);
/** The concurrency whose turns/s are the headline (the issue's target is stated at 50). */
const HEADLINE = CONCURRENCY[0] ?? 50;

const started = performance.now();
const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: readonly number[]) => percentile(sorted(xs), 50);
const p99 = (xs: readonly number[]) => percentile(sorted(xs), 99);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

type Backend = "memory" | "redis";
const BACKENDS: Backend[] = ["memory", "redis"];
/** CPU per turn of the concurrent workloads, by `<backend>.c<sessions>`. */
const cpu = createCpuMeter();

/** One value per round, per backend, per measure. */
class Rounds {
  private readonly values = new Map<string, number[]>();
  add(key: string, value: number): void {
    this.values.set(key, [...(this.values.get(key) ?? []), value]);
  }
  all(key: string): number[] {
    return this.values.get(key) ?? [];
  }
  median(key: string): number {
    return median(this.all(key));
  }
  range(key: string): [number, number] {
    const xs = sorted(this.all(key));
    return [xs[0] ?? Number.NaN, xs.at(-1) ?? Number.NaN];
  }
}

const ttfds = (timings: readonly TurnTiming[]) => timings.map((t) => t.ttfdMs);
const durations = (timings: readonly TurnTiming[]) => timings.map((t) => t.ms);

async function measureRound(
  r: number,
  clients: Record<Backend, TurnClient>,
  rounds: Rounds,
  subjects: Record<Backend, CpuSubject>,
): Promise<void> {
  // Alternate which backend goes first, workload by workload.
  const order = r % 2 === 0 ? BACKENDS : [...BACKENDS].reverse();
  for (const backend of order) {
    const timings = await sequentialTurns(clients[backend], `seq-${r}-${backend}`, SEQ_TURNS);
    const seconds = durations(timings).reduce((a, b) => a + b, 0) / 1000;
    rounds.add(`${backend}.seq.turns_s`, timings.length / seconds);
    rounds.add(`${backend}.seq.p50`, median(durations(timings)));
    rounds.add(`${backend}.seq.p99`, p99(durations(timings)));
    rounds.add(`${backend}.seq.ttfd_p50`, median(ttfds(timings)));
    rounds.add(`${backend}.seq.ttfd_p99`, p99(ttfds(timings)));
  }
  for (const sessions of CONCURRENCY) {
    const turnsS: Partial<Record<Backend, number>> = {};
    for (const backend of order) {
      const result = await cpu.around(`${backend}.c${sessions}`, subjects[backend], () =>
        concurrentTurns(clients[backend], `c${sessions}-${r}-${backend}`, sessions, TURNS_EACH),
      );
      turnsS[backend] = result.turnsS;
      rounds.add(`${backend}.c${sessions}.turns_s`, result.turnsS);
      rounds.add(`${backend}.c${sessions}.ttfd_p50`, median(ttfds(result.timings)));
      rounds.add(`${backend}.c${sessions}.ttfd_p99`, p99(ttfds(result.timings)));
    }
    rounds.add(`c${sessions}.redis_vs_memory`, (turnsS.redis ?? 0) / (turnsS.memory ?? 1));
  }
  for (const backend of order) {
    const result = await enqueuedInputs(clients[backend], `enq-${r}-${backend}`, ENQUEUED);
    rounds.add(`${backend}.enq.ms_per_input`, result.msPerInput);
    rounds.add(`${backend}.enq.turns`, result.turns);
  }
  for (const backend of order) {
    const fresh = await sequentialTurns(clients[backend], `fresh-${r}-${backend}`, LONG_SAMPLE);
    const long = await sequentialTurns(
      clients[backend],
      `long-${backend}`,
      LONG_SAMPLE,
      LONG_TURNS + r * LONG_SAMPLE,
    );
    rounds.add(`${backend}.first.ms`, median(durations(fresh)));
    rounds.add(`${backend}.long.ms`, median(durations(long)));
    rounds.add(`${backend}.long_vs_first`, median(durations(long)) / median(durations(fresh)));
  }
}

/** Fills `long-<backend>` with LONG_TURNS committed turns; per-turn ms at a few depths. */
async function prepareLongSession(client: TurnClient, backend: Backend) {
  const timings = await sequentialTurns(client, `long-${backend}`, LONG_TURNS);
  const at = (from: number) => round(median(durations(timings.slice(from, from + 10))));
  const depths = [0, 100, 500, LONG_TURNS - 10].filter((d) => d >= 0 && d < LONG_TURNS);
  return Object.fromEntries(depths.map((d) => [String(d), at(d)]));
}

async function main(): Promise<void> {
  const logDir = await mkdtemp(join(tmpdir(), "tether-bench-turns-"));
  const redis = await startRedis();
  const servers: TetherProcess[] = [];
  try {
    // SIGUSR2 takes a heap snapshot (collecting first), for memory per idle session.
    const snapshots = heapSnapshotArgs(logDir);
    servers.push(await startTether("memory", { TETHER_STORE: "memory" }, logDir, snapshots));
    servers.push(
      await startTether(
        "redis",
        { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}` },
        logDir,
        snapshots,
      ),
    );
    const clients: Record<Backend, TurnClient> = {
      memory: turnClient(servers[0]?.address ?? ""),
      redis: turnClient(servers[1]?.address ?? ""),
    };
    for (const backend of BACKENDS) {
      await sequentialTurns(clients[backend], `warm-${backend}`, WARMUP);
      await concurrentTurns(clients[backend], `warm-${backend}`, HEADLINE, 1);
    }
    const longCurve: Partial<Record<Backend, Record<string, number>>> = {};
    for (const backend of BACKENDS) {
      longCurve[backend] = await prepareLongSession(clients[backend], backend);
    }
    const subjects: Record<Backend, CpuSubject> = {
      memory: { pid: servers[0]?.child.pid ?? 0 },
      redis: { pid: servers[1]?.child.pid ?? 0, redisPort: redis.port },
    };
    const rounds = new Rounds();
    for (let r = 0; r < ROUNDS; r++) await measureRound(r, clients, rounds, subjects);
    const rss: Partial<Record<Backend, IdleSessionMemory>> = {};
    for (const backend of BACKENDS) {
      const pid = subjects[backend].pid;
      const at = `idle-${backend}`;
      rss[backend] = await memoryPerIdleSession(clients[backend], pid, logDir, at, IDLE_SESSIONS);
    }
    // Stopped first, so that no other process reloads scripts behind the proxy's back and the
    // counted server has the machine to itself. The long session stays in Redis.
    for (const server of servers.splice(0)) await server.stop();
    const counts = await countCommands({
      redisPort: redis.port,
      logDir,
      warmup: WARMUP,
      countTurns: COUNT_TURNS,
      idleTurns: IDLE_TURNS,
      sessions: HEADLINE,
      enqueued: ENQUEUED,
      longSession: "long-redis",
    });
    const renewals = await countRenewals({
      redisPort: redis.port,
      logDir,
      leases: RENEW_LEASES,
      holdMs: RENEW_HOLD_MS,
      leaseTtlMs: RENEW_TTL_MS,
    });
    const tracing = await compareTracing(tracingOptionsFromEnv(logDir));
    const durability = await compareDurability(durabilityOptionsFromEnv(logDir));
    report(rounds, counts, renewals, longCurve, tracing, durability, rss);
  } finally {
    for (const server of servers) await server.stop();
    await redis.stop();
    await rm(logDir, { recursive: true, force: true });
  }
}

function report(
  rounds: Rounds,
  counts: CountReport,
  renewals: RenewalCount,
  longCurve: Partial<Record<Backend, Record<string, number>>>,
  tracing: TracingComparison,
  durability: DurabilityComparison,
  rss: Partial<Record<Backend, IdleSessionMemory>>,
): void {
  const ms = (key: string) => `${rounds.median(key).toFixed(1)} ms`;
  const rate = (key: string) => rounds.median(key).toFixed(0);
  const both = (label: string, key: string, cell: (k: string) => string, ratio?: string) => ({
    measure: label,
    memory: cell(`memory.${key}`),
    redis: cell(`redis.${key}`),
    "redis/memory":
      ratio ?? (rounds.median(`redis.${key}`) / rounds.median(`memory.${key}`)).toFixed(2),
  });
  const rows: Record<string, string>[] = [
    both("1 session, sequential: turns/s", "seq.turns_s", rate),
    both("1 session: turn p50", "seq.p50", ms),
    both("1 session: turn p99", "seq.p99", ms),
    both("1 session: time to first delta p50", "seq.ttfd_p50", ms),
    both("1 session: time to first delta p99", "seq.ttfd_p99", ms),
  ];
  for (const sessions of CONCURRENCY) {
    rows.push(
      both(
        `${sessions} sessions: turns/s`,
        `c${sessions}.turns_s`,
        rate,
        rounds.median(`c${sessions}.redis_vs_memory`).toFixed(2),
      ),
      both(`${sessions} sessions: time to first delta p99`, `c${sessions}.ttfd_p99`, ms),
    );
  }
  rows.push(
    both(`${ENQUEUED} enqueued inputs, 1 session: ms per input`, "enq.ms_per_input", ms),
    both(`${ENQUEUED} enqueued inputs: turns that ran`, "enq.turns", rate, ""),
    both(`turn at turns 1-${LONG_SAMPLE} of a new session`, "first.ms", ms),
    both(`turn at ${LONG_TURNS}+ turns`, "long.ms", ms),
    both(
      `turn at ${LONG_TURNS}+ turns / first turns`,
      "long_vs_first",
      (k) => rounds.median(k).toFixed(2),
      "",
    ),
  );
  console.log(`median of ${ROUNDS} alternating rounds`);
  printTable(rows);
  console.log("");
  console.log("Redis, counted through the proxy (per turn; per input for enqueued)");
  printTable(
    (
      [
        "idle",
        "sequential",
        "concurrent",
        "enqueued",
        "long",
        "toolTurn",
        "steeredToolTurn",
      ] as const
    ).map((k) => ({
      workload: {
        idle: "1 session, idle before each turn",
        sequential: "1 session, back to back",
        concurrent: `${HEADLINE} sessions`,
        enqueued: `${ENQUEUED} enqueued inputs`,
        long: `1 session at ${LONG_TURNS}+ turns`,
        toolTurn: "1 client tool call, idle session",
        steeredToolTurn: "the same, plus 1 steered input",
      }[k],
      commands: counts[k].commands.toFixed(2),
      "round trips": counts[k].roundTrips.toFixed(2),
      connections: counts[k].connections.toFixed(2),
      "MULTI blocks": counts[k].multiBlocks.toFixed(2),
    })),
  );
  console.log("");
  console.log(
    `one plain turn on an idle session: ${Object.entries(counts.breakdownOneTurn)
      .map(([name, n]) => `${name} ${n}`)
      .join(", ")}`,
  );
  console.log(
    `lease renewals: ${renewals.leases} leases held for ${renewals.seconds} s (TTL ${renewals.lease_ttl_ms} ms): ` +
      `${renewals.renewal_calls} renewLeases calls (a timer per lease: ${renewals.calls_with_a_timer_per_lease})`,
  );
  console.log("");
  printTracing(tracing);
  console.log("");
  printDurability(durability);
  const resources = resourceFigures(cpu, CONCURRENCY, HEADLINE, rss);
  printResources(resources, IDLE_SESSIONS);
  const headline = (key: string) => round(rounds.median(key));
  const range = (key: string) => rounds.range(key).map((x) => round(x));
  const json = {
    bench: "turns",
    memory_turns_s: headline(`memory.c${HEADLINE}.turns_s`),
    redis_turns_s: headline(`redis.c${HEADLINE}.turns_s`),
    redis_vs_memory: round(rounds.median(`c${HEADLINE}.redis_vs_memory`), 3),
    redis_commands_per_turn: counts.idle.commands,
    redis_round_trips_per_turn: counts.idle.roundTrips,
    ttfd_p50_ms: headline("redis.seq.ttfd_p50"),
    ttfd_p99_ms: headline("redis.seq.ttfd_p99"),
    turn_ms_at_1000_turns_vs_first: round(rounds.median("redis.long_vs_first"), 3),
    // [min, max] over rounds of each headline figure above that is measured per round.
    range: {
      memory_turns_s: range(`memory.c${HEADLINE}.turns_s`),
      redis_turns_s: range(`redis.c${HEADLINE}.turns_s`),
      redis_vs_memory: range(`c${HEADLINE}.redis_vs_memory`),
      ttfd_p50_ms: range("redis.seq.ttfd_p50"),
      ttfd_p99_ms: range("redis.seq.ttfd_p99"),
      turn_ms_at_1000_turns_vs_first: range("redis.long_vs_first"),
    },
    headline_sessions: HEADLINE,
    memory: perBackend(rounds, "memory", longCurve.memory),
    redis: perBackend(rounds, "redis", longCurve.redis),
    redis_counts: {
      per_turn: {
        idle: counts.idle,
        sequential: counts.sequential,
        [`sessions_${HEADLINE}`]: counts.concurrent,
        enqueued_per_input: counts.enqueued,
        [`at_${LONG_TURNS}_turns`]: counts.long,
        client_tool_turn: counts.toolTurn,
        client_tool_turn_with_steer: counts.steeredToolTurn,
      },
      client_tool_turn_mean: counts.breakdownToolTurn,
      one_plain_turn: counts.breakdownOneTurn,
      idle_mean: counts.breakdownIdle,
      sequential_mean: counts.breakdownSequential,
      [`sessions_${HEADLINE}_mean`]: counts.breakdownConcurrent,
      enqueued_per_input_mean: counts.breakdownEnqueued,
    },
    ...resources.headline,
    cpu_per_turn: resources.bySessions,
    memory_per_idle_session: resources.idleSessionMemory,
    lease_renewals: renewals,
    tracing,
    durability,
    sizes: {
      rounds: ROUNDS,
      seq_turns: SEQ_TURNS,
      concurrency: CONCURRENCY,
      turns_each: TURNS_EACH,
      enqueued: ENQUEUED,
      long_turns: LONG_TURNS,
      long_sample: LONG_SAMPLE,
      count_turns: COUNT_TURNS,
      idle_turns: IDLE_TURNS,
      idle_sessions: IDLE_SESSIONS,
    },
    node: process.version,
    seconds: round((performance.now() - started) / 1000, 1),
  };
  console.log(JSON.stringify(json));
}

function perBackend(
  rounds: Rounds,
  backend: Backend,
  longCurve: Record<string, number> | undefined,
) {
  const m = (key: string) => round(rounds.median(`${backend}.${key}`));
  return {
    sequential: {
      turns_s: m("seq.turns_s"),
      p50_ms: m("seq.p50"),
      p99_ms: m("seq.p99"),
      ttfd_p50_ms: m("seq.ttfd_p50"),
      ttfd_p99_ms: m("seq.ttfd_p99"),
    },
    ...Object.fromEntries(
      CONCURRENCY.map((c) => [
        `sessions_${c}`,
        {
          turns_s: m(`c${c}.turns_s`),
          ttfd_p50_ms: m(`c${c}.ttfd_p50`),
          ttfd_p99_ms: m(`c${c}.ttfd_p99`),
        },
      ]),
    ),
    enqueued: { ms_per_input: m("enq.ms_per_input"), turns: m("enq.turns") },
    first_turns_ms: m("first.ms"),
    long_turns_ms: m("long.ms"),
    long_vs_first: round(rounds.median(`${backend}.long_vs_first`), 3),
    long_vs_first_range: rounds.range(`${backend}.long_vs_first`).map((x) => round(x, 3)),
    // Median turn ms while the long session was filled, by turns already committed.
    fill_curve_ms: longCurve ?? {},
  };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
