// The Redis path's CPU against the memory store's, by function: `npm run build && npx tsx
// bench/turns/store-profile.ts`. Built servers (memory, and Redis on its own throwaway
// redis-server) under `node --cpu-prof` run the same concurrent turns, the order rotating every
// round, with CPU per turn read around each workload; then each profile's self time per turn, and
// the Redis one minus the memory one, function by function (issue 39, item 5). Profiles go to
// .tmp/bench-store-profile/. BENCH_BASELINE=<dir of another built tree> runs that tree's servers
// too, in the same rounds (a before/after in one run); BENCH_PROFILE=0 leaves the profiler off.
// Sizes: BENCH_ROUNDS (4), BENCH_CONCURRENCY (50,200), BENCH_TURNS_EACH (4), BENCH_TOP (25).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startRedis } from "../../test/support/redis-harness.js";
import { printTable } from "../support/stats.js";
import { selfTimeByFunction } from "./cpu-profile.js";
import { createCpuMeter, type CpuSubject } from "./resources.js";
import { startTether, type TetherProcess } from "./server.js";
import { concurrentTurns, sequentialTurns, turnClient, type TurnClient } from "./workloads.js";

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = size("BENCH_ROUNDS", 4);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? "50,200").split(",").map(Number);
const TURNS_EACH = size("BENCH_TURNS_EACH", 4);
const TOP = size("BENCH_TOP", 25);
const PROFILE = process.env.BENCH_PROFILE !== "0";
const BASELINE = process.env.BENCH_BASELINE;
const PROFILE_DIR = resolve(".tmp/bench-store-profile");

interface Subject {
  /** `<tree>.<store>`: tree "this" or "base". */
  label: string;
  tree: string;
  store: "memory" | "redis";
  entry: string;
  profile: string;
  server?: TetherProcess;
  client?: TurnClient;
  cpu?: CpuSubject;
  turns: number;
}

async function main(): Promise<void> {
  await mkdir(PROFILE_DIR, { recursive: true });
  const logDir = await mkdtemp(join(tmpdir(), "tether-bench-store-profile-"));
  const stamp = Date.now();
  const trees: [string, string][] = [["this", "dist/server/main.js"]];
  if (BASELINE) trees.push(["base", join(BASELINE, "dist/server/main.js")]);
  const subjects: Subject[] = trees.flatMap(([tree, entry]) =>
    (["memory", "redis"] as const).map((store) => ({
      label: `${tree}.${store}`,
      tree,
      store,
      entry,
      profile: `${tree}-${store}-${stamp}.cpuprofile`,
      turns: 0,
    })),
  );
  const redises: Awaited<ReturnType<typeof startRedis>>[] = [];
  const cpu = createCpuMeter();
  try {
    for (const s of subjects) {
      let env: Record<string, string> = { TETHER_STORE: "memory" };
      let redisPort: number | undefined;
      if (s.store === "redis") {
        const redis = await startRedis();
        redises.push(redis);
        redisPort = redis.port;
        env = { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}` };
      }
      const prof = PROFILE
        ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${s.profile}`]
        : [];
      s.server = await startTether(s.label, env, logDir, prof, s.entry);
      s.client = turnClient(s.server.address);
      s.cpu = { pid: s.server.child.pid ?? 0, ...(redisPort !== undefined && { redisPort }) };
      await sequentialTurns(s.client, `warm-${s.label}`, 20);
      await concurrentTurns(s.client, `warm-${s.label}`, 50, 1);
    }
    for (let r = 0; r < ROUNDS; r++) {
      const order = [
        ...subjects.slice(r % subjects.length),
        ...subjects.slice(0, r % subjects.length),
      ];
      for (const sessions of CONCURRENCY) {
        for (const s of order) {
          const result = await cpu.around(`${s.label}.c${sessions}`, s.cpu as CpuSubject, () =>
            concurrentTurns(
              s.client as TurnClient,
              `c${sessions}-${r}-${s.label}`,
              sessions,
              TURNS_EACH,
            ),
          );
          s.turns += result.turns;
        }
      }
    }
  } finally {
    // The profiles are written when the processes exit (SIGTERM drains, then exits).
    for (const s of subjects) await s.server?.stop();
    for (const redis of redises) await redis.stop();
    await rm(logDir, { recursive: true, force: true });
  }
  printTable(
    trees.flatMap(([tree]) =>
      CONCURRENCY.map((c) => {
        const m = cpu.perTurn(`${tree}.memory.c${c}`);
        const r = cpu.perTurn(`${tree}.redis.c${c}`);
        return {
          tree,
          sessions: String(c),
          "memory: server ms/turn": m.server_ms.toFixed(3),
          "redis: server ms/turn": r.server_ms.toFixed(3),
          "redis: redis-server ms/turn": r.redis_ms.toFixed(3),
          "redis / memory": ((r.server_ms + r.redis_ms) / m.server_ms).toFixed(2),
        };
      }),
    ),
  );
  if (PROFILE) for (const [tree] of trees) printProfiles(subjects.filter((s) => s.tree === tree));
}

/** Self time per measured turn (start-up and warm-up are in the profiles too, and small). */
function printProfiles([memory, redis]: Subject[]): void {
  if (!memory || !redis) return;
  const read = (s: Subject) => {
    const profile = selfTimeByFunction(join(PROFILE_DIR, s.profile));
    return { ...profile, perTurn: (fn: string) => (profile.us.get(fn) ?? 0) / s.turns };
  };
  const m = read(memory);
  const r = read(redis);
  const rows = [...new Set([...m.us.keys(), ...r.us.keys()])]
    .map((fn) => ({ fn, memory: m.perTurn(fn), redis: r.perTurn(fn) }))
    .sort((a, b) => b.redis - b.memory - (a.redis - a.memory))
    .slice(0, TOP);
  const busyM = m.busyUs / memory.turns;
  const busyR = r.busyUs / redis.turns;
  console.log(
    `\n${memory.tree}: busy (sampled, idle excluded) µs per turn: memory ${busyM.toFixed(0)}, redis ${busyR.toFixed(0)}`,
  );
  console.log("self time, µs per turn, by Redis minus memory");
  printTable(
    rows.map((row) => ({
      function: row.fn.slice(0, 90),
      memory: row.memory.toFixed(1),
      redis: row.redis.toFixed(1),
      "redis - memory": (row.redis - row.memory).toFixed(1),
      "share of redis busy": `${((100 * row.redis) / busyR).toFixed(1)} %`,
    })),
  );
  console.log(`profiles: ${memory.profile} ${redis.profile} in ${PROFILE_DIR}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
