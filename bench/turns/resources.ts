// CPU per turn and memory per idle session for bench:turns (issue 39, item 5). The servers are
// child processes, so their CPU is read from /proc around each workload; a Redis-backed
// server's turns also cost the redis-server's own CPU, read from its INFO cpu. RSS per idle
// session: the server's RSS and live heap before and after a batch of new sessions, each left
// idle after one turn, both read after a collection forced by a heap snapshot (SIGUSR2).
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { processCpuMs, processRssBytes, redisCpuMs } from "../support/process-stats.js";
import { printTable } from "../support/stats.js";
import { concurrentTurns, type Throughput, type TurnClient } from "./workloads.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

/** Whose CPU a workload is charged: the server's process, and its redis-server if any. */
export interface CpuSubject {
  pid: number;
  redisPort?: number;
}

interface Tally {
  serverMs: number;
  redisMs: number;
  turns: number;
}

export interface CpuPerTurn {
  /** The server process's CPU per turn, ms. */
  server_ms: number;
  /** The redis-server's own CPU per turn, ms (0 for the memory store). */
  redis_ms: number;
  turns: number;
}

export type CpuMeter = ReturnType<typeof createCpuMeter>;

export function createCpuMeter() {
  const tallies = new Map<string, Tally>();
  return {
    /** Runs `work`, charging the CPU its subject spent meanwhile to `key`. */
    async around(key: string, subject: CpuSubject, work: () => Promise<Throughput>) {
      const redisCpu = async () =>
        subject.redisPort === undefined ? 0 : redisCpuMs(subject.redisPort);
      const server0 = processCpuMs(subject.pid);
      const redis0 = await redisCpu();
      const result = await work();
      const server = processCpuMs(subject.pid) - server0;
      const redis = (await redisCpu()) - redis0;
      const tally = tallies.get(key) ?? { serverMs: 0, redisMs: 0, turns: 0 };
      tallies.set(key, {
        serverMs: tally.serverMs + server,
        redisMs: tally.redisMs + redis,
        turns: tally.turns + result.turns,
      });
      return result;
    },
    perTurn(key: string): CpuPerTurn {
      const t = tallies.get(key) ?? { serverMs: 0, redisMs: 0, turns: 0 };
      return {
        server_ms: round(t.serverMs / t.turns),
        redis_ms: round(t.redisMs / t.turns),
        turns: t.turns,
      };
    },
  };
}

/** Node flags that let a benchmark force a collection: a heap snapshot on SIGUSR2 collects first. */
export const heapSnapshotArgs = (dir: string) => [
  "--heapsnapshot-signal=SIGUSR2",
  `--diagnostic-dir=${dir}`,
];

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[] } };
  nodes: number[];
}

/**
 * Signals the server for a heap snapshot (V8 collects garbage before taking it) and waits for
 * the file; the server's live heap is the sum of the snapshot's self sizes. RSS is read after.
 */
async function collectAndMeasure(pid: number, dir: string): Promise<{ rss: number; heap: number }> {
  const known = new Set(await readdir(dir));
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`no heap snapshot from ${pid} in ${dir}`);
    await sleep(250);
    const file = (await readdir(dir)).find(
      (f) => f.endsWith(".heapsnapshot") && f.includes(`.${pid}.`) && !known.has(f),
    );
    if (!file) continue;
    const path = join(dir, file);
    let parsed: HeapSnapshot;
    try {
      parsed = JSON.parse(await readFile(path, "utf8")) as HeapSnapshot;
    } catch {
      continue; // still being written
    }
    await rm(path, { force: true });
    const fields = parsed.snapshot.meta.node_fields;
    const selfSize = fields.indexOf("self_size");
    let heap = 0;
    for (let i = selfSize; i < parsed.nodes.length; i += fields.length)
      heap += parsed.nodes[i] ?? 0;
    await sleep(200);
    return { rss: processRssBytes(pid), heap };
  }
}

export interface IdleSessionMemory {
  /** RSS growth per session, both readings after a forced collection. */
  rss_bytes: number;
  /** Live JS heap growth per session (heap snapshots). */
  heap_bytes: number;
}

/**
 * Memory growth per session after `sessions` new sessions ran one turn each and went idle,
 * created `batch` at a time (under the per-tenant stream limit). The server must have been
 * started with heapSnapshotArgs(dir).
 */
export async function memoryPerIdleSession(
  client: TurnClient,
  pid: number,
  dir: string,
  prefix: string,
  sessions: number,
  batch = 50,
): Promise<IdleSessionMemory> {
  // The first snapshot grows RSS by what taking a snapshot needs, which later ones reuse: that
  // one is taken before the baseline.
  await collectAndMeasure(pid, dir);
  const before = await collectAndMeasure(pid, dir);
  for (let made = 0; made < sessions; made += batch) {
    await concurrentTurns(client, `${prefix}-${made}`, Math.min(batch, sessions - made), 1);
  }
  await sleep(1000);
  const after = await collectAndMeasure(pid, dir);
  return {
    rss_bytes: Math.round((after.rss - before.rss) / sessions),
    heap_bytes: Math.round((after.heap - before.heap) / sessions),
  };
}

/**
 * CPU per turn at each concurrency: the server's, and Redis's own; `redis_vs_memory_cpu` is the
 * Redis path's server + redis-server CPU over the memory store's server CPU.
 */
export function resourceFigures(
  cpu: CpuMeter,
  concurrency: readonly number[],
  headline: number,
  memory: Partial<Record<"memory" | "redis", IdleSessionMemory>>,
) {
  const bySessions = Object.fromEntries(
    concurrency.map((c) => {
      const memory = cpu.perTurn(`memory.c${c}`);
      const redis = cpu.perTurn(`redis.c${c}`);
      const figures = {
        cpu_ms_per_turn_memory: memory.server_ms,
        cpu_ms_per_turn_redis: redis.server_ms,
        redis_cpu_ms_per_turn: redis.redis_ms,
        redis_vs_memory_cpu: round((redis.server_ms + redis.redis_ms) / memory.server_ms, 3),
      };
      return [`sessions_${c}`, figures];
    }),
  );
  return {
    headline: {
      ...bySessions[`sessions_${headline}`],
      rss_bytes_per_idle_session: memory.redis?.rss_bytes ?? Number.NaN,
    },
    bySessions,
    idleSessionMemory: memory,
  };
}

export function printResources(r: ReturnType<typeof resourceFigures>, idleSessions: number): void {
  console.log("");
  console.log("CPU per turn (ms; server from /proc, Redis from INFO cpu), concurrent workloads");
  printTable(
    Object.entries(r.bySessions).map(([key, f]) => ({
      workload: key.replace("sessions_", "") + " sessions",
      "memory: server": f.cpu_ms_per_turn_memory.toFixed(3),
      "redis: server": f.cpu_ms_per_turn_redis.toFixed(3),
      "redis: redis-server": f.redis_cpu_ms_per_turn.toFixed(3),
      "redis / memory": f.redis_vs_memory_cpu.toFixed(2),
    })),
  );
  console.log(
    `per idle session (${idleSessions} sessions, after a forced collection): RSS memory store ${r.idleSessionMemory.memory?.rss_bytes} bytes, ` +
      `Redis ${r.idleSessionMemory.redis?.rss_bytes} bytes; live heap memory store ${r.idleSessionMemory.memory?.heap_bytes} bytes, Redis ${r.idleSessionMemory.redis?.heap_bytes} bytes`,
  );
}
