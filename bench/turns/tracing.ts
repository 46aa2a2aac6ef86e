// Tracing on against tracing off, in the same run with the same workload: two built servers on
// the memory store, one exporting its spans over OTLP/HTTP (protobuf) to a receiver in a process
// of its own (bench/support/otlp-sink.ts: it counts spans without decoding them, and its CPU is
// reported apart), one with no endpoint (no tracer, no SDK). Rounds alternate which goes first.
// Part of bench:turns; run alone with `npm run bench:turns:tracing` (sizes: BENCH_TRACING_*).
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startOtlpSink } from "../support/otlp-sink.js";
import { percentile, printTable } from "../support/stats.js";
import { startTether, type TetherProcess } from "./server.js";
import { concurrentTurns, sequentialTurns, turnClient, type TurnClient } from "./workloads.js";

export interface TracingComparison {
  sessions: number;
  turns_each: number;
  rounds: number;
  off_turns_s: number;
  on_turns_s: number;
  /** on / off: 1 means tracing costs nothing measurable. */
  on_vs_off: number;
  on_vs_off_range: [number, number];
  /** Spans the receiver counted per traced turn (RPC, invoke_agent, chat). */
  spans_per_turn: number;
  /** Export requests per traced turn: how the batching processor groups them. */
  exports_per_turn: number;
  /**
   * The receiver process's CPU per traced turn (over the whole run, warm-up included): what a
   * Collector would pay elsewhere; on this machine it shares the two cores with the rest.
   */
  receiver_cpu_ms_per_turn: number;
  /**
   * The server's own CPU (user + system) per turn, median of the rounds: less swayed than turns/s
   * by other work on a shared machine. NaN where /proc is missing (not Linux).
   */
  off_cpu_ms_per_turn: number;
  on_cpu_ms_per_turn: number;
  /** on / off of the CPU per turn: 1 means tracing costs the server nothing. */
  cpu_on_vs_off: number;
  /**
   * This process's CPU per turn (the clients only: the receiver runs apart): on the same two
   * cores, part of what either rate pays besides the server.
   */
  bench_off_cpu_ms_per_turn: number;
  bench_on_cpu_ms_per_turn: number;
}

/** A process's CPU time so far (user + system), in ms, from /proc; NaN elsewhere. */
function cpuMsOf(pid: number | undefined): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

export interface TracingOptions {
  rounds: number;
  sessions: number;
  turnsEach: number;
  warmup: number;
  logDir: string;
}

const median = (xs: readonly number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

export async function compareTracing(options: TracingOptions): Promise<TracingComparison> {
  const receiver = await startOtlpSink();
  const receiverStartCpu = (await receiver.stats()).cpuMs;
  const servers: TetherProcess[] = [];
  try {
    const memory = { TETHER_STORE: "memory" };
    servers.push(await startTether("tracing-off", memory, options.logDir));
    servers.push(
      await startTether(
        "tracing-on",
        {
          ...memory,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        },
        options.logDir,
      ),
    );
    const clients: Record<"off" | "on", TurnClient> = {
      off: turnClient(servers[0]?.address ?? ""),
      on: turnClient(servers[1]?.address ?? ""),
    };
    for (const mode of ["off", "on"] as const) {
      await sequentialTurns(clients[mode], `warm-tracing-${mode}`, options.warmup);
    }
    const rates: Record<"off" | "on", number[]> = { off: [], on: [] };
    const cpu: Record<"off" | "on", number[]> = { off: [], on: [] };
    const benchCpu: Record<"off" | "on", number[]> = { off: [], on: [] };
    const pids = { off: servers[0]?.child.pid, on: servers[1]?.child.pid };
    const ratios: number[] = [];
    let tracedTurns = 0;
    for (let r = 0; r < options.rounds; r++) {
      const order = r % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
      const rate: Partial<Record<"off" | "on", number>> = {};
      for (const mode of order) {
        const cpuBefore = cpuMsOf(pids[mode]);
        const benchBefore = process.cpuUsage();
        const result = await concurrentTurns(
          clients[mode],
          `tracing-${mode}-${r}`,
          options.sessions,
          options.turnsEach,
        );
        // The batch the traced server still holds is sent within its delay: counted in a later
        // round (or not at all), evenly across rounds.
        cpu[mode].push((cpuMsOf(pids[mode]) - cpuBefore) / result.turns);
        const bench = process.cpuUsage(benchBefore);
        benchCpu[mode].push((bench.user + bench.system) / 1000 / result.turns);
        rate[mode] = result.turnsS;
        rates[mode].push(result.turnsS);
        if (mode === "on") tracedTurns += result.turns;
      }
      ratios.push((rate.on ?? 0) / (rate.off ?? 1));
    }
    // The traced server sends what it still batches when it stops (graceful shutdown flushes).
    for (const server of servers.splice(0)) await server.stop();
    const sink = await receiver.stats();
    const sorted = [...ratios].sort((a, b) => a - b);
    return {
      sessions: options.sessions,
      turns_each: options.turnsEach,
      rounds: options.rounds,
      off_turns_s: round(median(rates.off)),
      on_turns_s: round(median(rates.on)),
      on_vs_off: round(median(ratios), 3),
      on_vs_off_range: [round(sorted[0] ?? Number.NaN, 3), round(sorted.at(-1) ?? Number.NaN, 3)],
      // Every span the traced server sent (its warm-up turns included), per turn it ran.
      spans_per_turn: round(sink.spans / (tracedTurns + options.warmup)),
      exports_per_turn: round(sink.exports / (tracedTurns + options.warmup), 4),
      receiver_cpu_ms_per_turn: round(
        (sink.cpuMs - receiverStartCpu) / (tracedTurns + options.warmup),
        3,
      ),
      off_cpu_ms_per_turn: round(median(cpu.off), 3),
      on_cpu_ms_per_turn: round(median(cpu.on), 3),
      cpu_on_vs_off: round(median(cpu.on) / median(cpu.off), 3),
      bench_off_cpu_ms_per_turn: round(median(benchCpu.off), 3),
      bench_on_cpu_ms_per_turn: round(median(benchCpu.on), 3),
    };
  } finally {
    for (const server of servers) await server.stop();
    await receiver.close();
  }
}

export function printTracing(c: TracingComparison): void {
  console.log(
    `tracing on vs off: ${c.sessions} sessions x ${c.turns_each} turns, median of ${c.rounds} alternating rounds (memory store)`,
  );
  printTable([
    {
      measure: "turns/s",
      off: c.off_turns_s.toFixed(0),
      on: c.on_turns_s.toFixed(0),
      "on/off": c.on_vs_off.toFixed(3),
    },
    {
      measure: "server CPU ms per turn",
      off: c.off_cpu_ms_per_turn.toFixed(2),
      on: c.on_cpu_ms_per_turn.toFixed(2),
      "on/off": c.cpu_on_vs_off.toFixed(3),
    },
    {
      measure: "bench process CPU ms per turn",
      off: c.bench_off_cpu_ms_per_turn.toFixed(2),
      on: c.bench_on_cpu_ms_per_turn.toFixed(2),
      "on/off": "",
    },
    {
      measure: "receiver process CPU ms per turn",
      off: "",
      on: c.receiver_cpu_ms_per_turn.toFixed(3),
      "on/off": "",
    },
    { measure: "spans exported per turn", off: "0", on: c.spans_per_turn.toFixed(2), "on/off": "" },
    { measure: "exports per turn", off: "0", on: c.exports_per_turn.toFixed(4), "on/off": "" },
  ]);
}

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

export function tracingOptionsFromEnv(logDir: string): TracingOptions {
  return {
    rounds: size("BENCH_TRACING_ROUNDS", 5),
    sessions: size("BENCH_TRACING_SESSIONS", 50),
    turnsEach: size("BENCH_TRACING_TURNS_EACH", 4),
    warmup: size("BENCH_WARMUP", 20),
    logDir,
  };
}

async function standalone(): Promise<void> {
  const logDir = await mkdtemp(join(tmpdir(), "tether-bench-tracing-"));
  try {
    const comparison = await compareTracing(tracingOptionsFromEnv(logDir));
    printTracing(comparison);
    console.log(JSON.stringify({ bench: "turns.tracing", ...comparison, node: process.version }));
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
