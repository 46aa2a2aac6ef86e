// Production-shaped turns (issue 39): the turn benchmark's workload on standalone Redis in six
// configurations in one run: plain (webhooks off), webhooks (one endpoint; the receiver in this
// process verifies every signature), tenant quotas (limits never reached), a spend budget with a
// price table, tracing to an OTLP receiver in a process of its own (bench/support/otlp-sink.ts,
// counting spans without decoding them), and all of them together; and the
// plain one on the memory store, for redis_vs_memory. Each has its own redis-server.
//   1. Timed: every server runs at once; rounds run `sessions` x `turns each` on each
//      configuration, the order rotating every round. Turns/s, and CPU per turn (the server's
//      process, the redis-server's own from INFO cpu) around each workload.
//   2. Counted: per configuration, a fresh redis-server behind the counting proxy (the proxy
//      stays out of the timed runs): commands and round trips per idle turn and per turn at
//      `sessions` at once (production-count.ts).
//   3. Profiled: the combined configuration once more under node --cpu-prof; the profile is
//      written under .tmp/ and its top functions by self time printed.
// `npm run build && npm run bench:turns:production`. Prints tables, then one JSON line.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { startRedis, type RedisProcess } from "../../test/support/redis-harness.js";
import { startWebhookReceiver } from "../../test/support/webhook-receiver.js";
import { startOtlpSink } from "../support/otlp-sink.js";
import { processCpuMs, redisCpuMs } from "../support/process-stats.js";
import { percentile, printTable } from "../support/stats.js";
import { topSelfTime } from "./cpu-profile.js";
import {
  CONFIGS,
  configEnv,
  deliversWebhooks,
  newWebhookSecret,
  type ConfigName,
  type FeatureSinks,
} from "./production-configs.js";
import { countConfig, type ConfigCounts } from "./production-count.js";
import { startTether, type TetherProcess } from "./server.js";
import { concurrentTurns, sequentialTurns, turnClient, type TurnClient } from "./workloads.js";

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = size("BENCH_PRODUCTION_ROUNDS", 5);
const SESSIONS = size("BENCH_PRODUCTION_SESSIONS", 50);
const TURNS_EACH = size("BENCH_PRODUCTION_TURNS_EACH", 4);
const WARMUP = size("BENCH_WARMUP", 20);
const IDLE_TURNS = size("BENCH_IDLE_TURNS", 20);
const PROFILE_ROUNDS = size("BENCH_PROFILE_ROUNDS", 5);
const PROFILE_DIR = resolve(".tmp/bench-production");

const started = performance.now();
const round = (x: number, digits = 2) => Number(x.toFixed(digits));
const median = (xs: readonly number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const range = (xs: readonly number[]): [number, number] => [
  round(Math.min(...xs), 3),
  round(Math.max(...xs), 3),
];

/** The timed targets: each configuration on Redis, and the plain one on the memory store. */
type Target = ConfigName | "memory";
const TARGETS: Target[] = [...CONFIGS, "memory"];

interface Timed {
  tether: TetherProcess;
  client: TurnClient;
  redis?: RedisProcess;
  turnsS: number[];
  turns: number;
  serverCpuMs: number;
  redisCpuMs: number;
}

async function startTimed(target: Target, sinks: FeatureSinks, logDir: string): Promise<Timed> {
  const redis = target === "memory" ? undefined : await startRedis();
  const store: Record<string, string> = redis
    ? { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}` }
    : { TETHER_STORE: "memory" };
  const env = { ...configEnv(target === "memory" ? "plain" : target, sinks), ...store };
  const tether = await startTether(`timed-${target}`, env, logDir);
  const client = turnClient(tether.address);
  return { tether, client, redis, turnsS: [], turns: 0, serverCpuMs: 0, redisCpuMs: 0 };
}

/** One timed workload: turns/s, and the CPU the server and its redis-server spent on it. */
async function measure(t: Timed, prefix: string): Promise<number> {
  const pid = t.tether.child.pid ?? 0;
  const cpu0 = processCpuMs(pid);
  const redis0 = t.redis ? await redisCpuMs(t.redis.port) : 0;
  const result = await concurrentTurns(t.client, prefix, SESSIONS, TURNS_EACH);
  t.serverCpuMs += processCpuMs(pid) - cpu0;
  if (t.redis) t.redisCpuMs += (await redisCpuMs(t.redis.port)) - redis0;
  t.turns += result.turns;
  t.turnsS.push(result.turnsS);
  return result.turnsS;
}

async function timedPhase(sinks: FeatureSinks, logDir: string) {
  const timed = new Map<Target, Timed>();
  try {
    for (const target of TARGETS) timed.set(target, await startTimed(target, sinks, logDir));
    const get = (target: Target) => timed.get(target) as Timed;
    for (const target of TARGETS) {
      await sequentialTurns(get(target).client, `warm-${target}`, WARMUP);
      await concurrentTurns(get(target).client, `warm-${target}`, SESSIONS, 1);
    }
    const ratios = { production: [] as number[], tracing: [] as number[], redis: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate the order, so that load from elsewhere lands on every configuration in turn.
      const order = TARGETS.map((_, i) => TARGETS[(i + r) % TARGETS.length] as Target);
      const rate: Partial<Record<Target, number>> = {};
      for (const target of order) rate[target] = await measure(get(target), `${target}-${r}`);
      const plain = rate.plain ?? Number.NaN;
      ratios.production.push((rate.all ?? 0) / plain);
      ratios.tracing.push((rate.tracing ?? 0) / plain);
      ratios.redis.push(plain / (rate.memory ?? Number.NaN));
    }
    const summary = Object.fromEntries(
      TARGETS.map((target) => {
        const t = get(target);
        const figures = {
          turns_s: round(median(t.turnsS)),
          turns_s_range: range(t.turnsS),
          server_cpu_ms_per_turn: round(t.serverCpuMs / t.turns, 3),
          redis_cpu_ms_per_turn: round(t.redisCpuMs / t.turns, 3),
        };
        return [target, figures];
      }),
    ) as Record<Target, TimedFigures>;
    return { summary, ratios };
  } finally {
    for (const t of timed.values()) {
      await t.tether.stop();
      await t.redis?.stop();
    }
  }
}

interface TimedFigures {
  turns_s: number;
  turns_s_range: [number, number];
  server_cpu_ms_per_turn: number;
  redis_cpu_ms_per_turn: number;
}

/** The combined configuration under --cpu-prof, on a fresh redis-server. */
async function profilePhase(sinks: FeatureSinks, logDir: string) {
  await mkdir(PROFILE_DIR, { recursive: true });
  const name = `production-all-${Date.now()}.cpuprofile`;
  const redis = await startRedis();
  try {
    const tether = await startTether(
      "profiled-all",
      {
        ...configEnv("all", sinks),
        TETHER_STORE: "redis",
        TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      },
      logDir,
      ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}`],
    );
    try {
      const client = turnClient(tether.address);
      await sequentialTurns(client, "profile-warm", WARMUP);
      for (let r = 0; r < PROFILE_ROUNDS; r++) {
        await concurrentTurns(client, `profile-${r}`, SESSIONS, TURNS_EACH);
      }
    } finally {
      // The profile is written when the process exits (SIGTERM drains, then exits).
      await tether.stop();
    }
  } finally {
    await redis.stop();
  }
  const path = join(PROFILE_DIR, name);
  return { path, top: topSelfTime(path, 10) };
}

async function main(): Promise<void> {
  const logDir = await mkdtemp(join(tmpdir(), "tether-bench-production-"));
  const webhookSecret = newWebhookSecret();
  const receiver = await startWebhookReceiver(webhookSecret);
  const otlp = await startOtlpSink();
  // Its start (loading the entry) is not what receiving costs.
  const otlpStartCpuMs = (await otlp.stats()).cpuMs;
  const sinks: FeatureSinks = {
    webhookUrl: receiver.url,
    webhookSecret,
    otlpEndpoint: otlp.endpoint,
  };
  try {
    const timed = await timedPhase(sinks, logDir);
    const counts = {} as Record<ConfigName, ConfigCounts>;
    for (const name of CONFIGS) {
      counts[name] = await countConfig({
        name,
        env: configEnv(name, sinks),
        logDir,
        warmup: WARMUP,
        idleTurns: IDLE_TURNS,
        sessions: SESSIONS,
        ...(deliversWebhooks(name) && { receiver }),
      });
    }
    const profile = await profilePhase(sinks, logDir);
    const sink = await otlp.stats();
    report(timed, counts, profile, {
      webhooksRejected: receiver.rejected,
      spans: sink.spans,
      otlpReceiverCpuMs: sink.cpuMs - otlpStartCpuMs,
    });
  } finally {
    await receiver.close();
    await otlp.close();
    if (process.env.BENCH_KEEP_LOGS === "1") console.error(`logs kept in ${logDir}`);
    else await rm(logDir, { recursive: true, force: true });
  }
}

type TimedResult = Awaited<ReturnType<typeof timedPhase>>;
type ProfileResult = Awaited<ReturnType<typeof profilePhase>>;

function report(
  timed: TimedResult,
  counts: Record<ConfigName, ConfigCounts>,
  profile: ProfileResult,
  sinks: { webhooksRejected: number; spans: number; otlpReceiverCpuMs: number },
): void {
  const { summary, ratios } = timed;
  const plain = summary.plain;
  console.log(
    `${SESSIONS} sessions x ${TURNS_EACH} turns, median of ${ROUNDS} rotating rounds; counts through the proxy`,
  );
  printTable(
    TARGETS.map((target) => {
      const s = summary[target];
      const c = target === "memory" ? undefined : counts[target];
      return {
        configuration: target === "memory" ? "plain, memory store" : target,
        "turns/s": s.turns_s.toFixed(0),
        "vs plain": (s.turns_s / plain.turns_s).toFixed(2),
        "server CPU ms/turn": s.server_cpu_ms_per_turn.toFixed(2),
        "redis CPU ms/turn": s.redis_cpu_ms_per_turn.toFixed(2),
        "idle: commands": c ? c.idle.commands.toFixed(2) : "",
        "idle: round trips": c ? c.idle.round_trips.toFixed(2) : "",
        [`${SESSIONS} sessions: commands`]: c ? c.concurrent.commands.toFixed(2) : "",
        [`${SESSIONS} sessions: round trips`]: c ? c.concurrent.round_trips.toFixed(2) : "",
      };
    }),
  );
  console.log("");
  console.log(`CPU profile of the combined configuration: ${profile.path}`);
  printTable(
    profile.top.map((f) => ({
      "self ms": f.ms.toFixed(1),
      share: `${(f.share * 100).toFixed(1)} %`,
      function: f.fn,
    })),
  );
  const json = {
    bench: "turns.production",
    plain_commands_per_turn: counts.plain.idle.commands,
    plain_round_trips_per_turn: counts.plain.idle.round_trips,
    production_commands_per_turn: counts.all.idle.commands,
    production_round_trips_per_turn: counts.all.idle.round_trips,
    production_vs_plain: round(median(ratios.production), 3),
    tracing_on_vs_off: round(median(ratios.tracing), 3),
    redis_vs_memory: round(median(ratios.redis), 3),
    range: {
      production_vs_plain: range(ratios.production),
      tracing_on_vs_off: range(ratios.tracing),
      redis_vs_memory: range(ratios.redis),
    },
    timed: summary,
    counts,
    webhooks_rejected: sinks.webhooksRejected,
    spans_received: sinks.spans,
    // The OTLP receiver's own process over the whole run (tracing, all, and their counts), its
    // start left out.
    otlp_receiver_cpu_ms: round(sinks.otlpReceiverCpuMs),
    profile: { path: profile.path, top_self_time: profile.top },
    sizes: {
      rounds: ROUNDS,
      sessions: SESSIONS,
      turns_each: TURNS_EACH,
      warmup: WARMUP,
      idle_turns: IDLE_TURNS,
      profile_rounds: PROFILE_ROUNDS,
    },
    node: process.version,
    seconds: round((performance.now() - started) / 1000, 1),
  };
  console.log(JSON.stringify(json));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
