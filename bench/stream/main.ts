// StreamTurn throughput and latency on the real server (memory store), against a bare
// connect-node server that streams the same TurnService messages with no runtime behind it (the
// transport ceiling). Both are served in this process over h2c and read by the same gRPC client.
//   (a) text deltas per second: lanes run burst turns (N deltas, no pause) back to back;
//   (b) concurrent streams: paced turns (one delta every PACE_MS, like a model streaming
//       tokens), ramping the number of concurrent turns until the p99 latency from a delta's
//       emission by the provider to its receipt by the client passes 50 ms. A level that fails
//       is run once more before the ramp stops (one stall of a shared machine should not end
//       either ramp), and each level also reports the time from a turn's request to its first
//       delta: pacing turn starts (ADR 0025) moves start work out of the deltas' way, and this
//       shows what it costs the turns that start.
//   (c) the same paced ramp through the OpenAI Agents API front door (sse-turns.ts): SSE streams
//       on the same server and the same turns, in the same run, stepped level by level with
//       Tether's gRPC ramp of (b) (issue 37's `sse_vs_grpc`, target >= 0.8).
// Every delta's text is its emission time (performance.now(), fixed width), so the client
// measures latency even where deltas were merged. Prints a table, then one JSON line.
import { systemClock } from "../../src/ports/clock.js";
import { createTranscriptCache } from "../../src/runtime/turn/transcript-cache.js";
import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { createClient, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { createTurnService } from "../../src/api/turn-service.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { FinishReason } from "../../src/gen/tether/v1/turn_pb.js";
import type {
  ModelProvider,
  ModelResponse,
  ModelStreamEvent,
} from "../../src/ports/model-provider.js";
import { systemSleep } from "../../src/ports/sleep.js";
import { silentLogger } from "../../src/runtime/deps.js";
import { createTetherRuntime } from "../../src/runtime/runtime.js";
import { createSessionBus } from "../../src/runtime/stream/session-bus.js";
import { parkingOf } from "../../src/server/build-runtime.js";
import { loadConfig } from "../../src/server/config.js";
import { createLogger } from "../../src/server/logger.js";
import { createMetrics } from "../../src/server/metrics.js";
import { replicaOwner } from "../../src/server/build-runtime.js";
import { createTetherServer } from "../../src/server/server.js";
import { buildStore } from "../../src/server/build-store.js";
import { createProcLivenessProbe } from "../../src/store/shared/local-process.js";
import { printTable } from "../support/stats.js";
import { createSessionEventSource } from "../../src/agents-api/index.js";
import {
  newTally,
  P99_LIMIT_MS,
  ramp as rampWith,
  rampTogether,
  stamp,
  STAMP_CHARS,
  tallyDelta,
  type LevelResult,
  type TurnRunner,
} from "./paced.js";
import { createSseRunner } from "./sse-turns.js";

const BURST_DELTAS = Number(process.env.BENCH_BURST_DELTAS ?? 256);
/** Lanes of the burst runs: the first is the headline figure, the others extra rows. */
const BURST_LANES = (process.env.BENCH_BURST_LANES ?? "1,4").split(",").map(Number);
const BURST_SECONDS = Number(process.env.BENCH_BURST_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PACED_DELTAS = Number(process.env.BENCH_PACED_DELTAS ?? 40);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 25);
const LEVELS = (
  process.env.BENCH_LEVELS ?? "5,10,25,50,100,150,200,250,300,350,400,450,500,600,800"
)
  .split(",")
  .map(Number);
/** The burst runs and the ceiling's ramp stop ramping past this (from the start). */
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 100_000);
/** Tether's gRPC and SSE ramps, stepped together: their own budget, from their start. */
const TETHER_BUDGET_MS = Number(process.env.BENCH_TETHER_BUDGET_MS ?? 100_000);

const started = performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** "<deltas> <pace ms>": the turn's shape, read by the provider and by the ceiling. */
const shape = (deltas: number, paceMs: number) => `${deltas} ${paceMs}`;
function parseShape(text: string): { deltas: number; paceMs: number } {
  const [deltas, paceMs] = text.split(" ").map(Number);
  return { deltas: deltas ?? 0, paceMs: paceMs ?? 0 };
}

async function* stampedDeltas(text: string): AsyncGenerator<string> {
  const { deltas, paceMs } = parseShape(text);
  for (let i = 0; i < deltas; i++) {
    if (paceMs > 0) await sleep(paceMs);
    yield stamp();
  }
}

function streamingProvider(): ModelProvider {
  return {
    name: "bench-stream",
    capabilities: { images: false },
    async *call(request): AsyncGenerator<ModelStreamEvent, ModelResponse, undefined> {
      const last = request.messages.at(-1);
      const text =
        last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "";
      let count = 0;
      for await (const delta of stampedDeltas(text)) {
        count++;
        yield { type: "text_delta", text: delta };
      }
      // The final text stays small: what is measured is streaming, not the commit's size.
      return { fullText: `${count} deltas`, parts: [{ type: "text", text: `${count} deltas` }] };
    },
  };
}

interface Target {
  name: string;
  port: number;
  close(): Promise<void>;
}

const firstDeltaOf = (l: LevelResult | undefined) =>
  l && { p50: Number(l.firstDeltaP50Ms.toFixed(1)), p99: Number(l.firstDeltaP99Ms.toFixed(1)) };

/** Tether's configuration in the run; TETHER_TURN_STARTS_PER_ITERATION is read from the env. */
const tetherConfig = loadConfig({
  TETHER_HOST: "127.0.0.1",
  TETHER_PORT: "0",
  TETHER_METRICS_PORT: "0",
  TETHER_LOG_LEVEL: "silent",
  // The SSE run holds one HTTP/1.1 connection per stream, every one from 127.0.0.1: hundreds of
  // clients, not one abusive address.
  TETHER_MAX_CONNECTIONS_PER_ADDRESS: "0",
  // One tenant runs every stream of the ramps (up to 800 at once, gRPC and SSE alike): past the
  // default concurrent_streams quota (256 per tenant per replica) a level would be refused.
  TETHER_QUOTAS: JSON.stringify({ default: { concurrent_streams: 100_000 } }),
  ...(process.env.TETHER_TURN_STARTS_PER_ITERATION !== undefined && {
    TETHER_TURN_STARTS_PER_ITERATION: process.env.TETHER_TURN_STARTS_PER_ITERATION,
  }),
});

async function startTether(): Promise<Target> {
  const config = tetherConfig;
  const logger = createLogger({ level: "silent" });
  const built = await buildStore({ kind: "memory" }, logger);
  const runtime = createTetherRuntime({
    store: built.store,
    clock: systemClock,
    transcripts: createTranscriptCache(built.store),
    log: built.log,
    signals: built.signals,
    ready: built.ready,
    liveness: createProcLivenessProbe(),
    bus: createSessionBus(),
    provider: streamingProvider(),
    sleep: systemSleep,
    owner: replicaOwner("bench"),
    leaseTtlMs: config.leaseTtlMs,
    clientToolTimeoutMs: config.clientToolTimeoutMs,
    turnStartsPerIteration: config.turnStartsPerIteration,
    parking: parkingOf(config),
    defaults: {},
    logger: silentLogger,
  });
  const server = await createTetherServer({
    config,
    store: built.store,
    logger,
    metrics: createMetrics({ defaultMetrics: false }),
    routes: (router) => router.service(TurnService, createTurnService({ runtime })),
    // The front door on the same port, over the same runtime: the SSE run's streams.
    runtime,
    sessionEvents: createSessionEventSource({ runtime, log: built.log, store: built.store }),
  });
  return {
    name: "tether",
    port: server.port,
    close: async () => {
      await server.close();
      await built.close();
    },
  };
}

/** The same messages a turn streams (started, N deltas, completed), with nothing behind them. */
async function startCeiling(): Promise<Target> {
  const impl: Partial<ServiceImpl<typeof TurnService>> = {
    async *streamTurn(req) {
      const input = req.input[0]?.kind;
      const text = input?.case === "text" ? input.value : "";
      const base = { sessionId: req.sessionId, turnId: "turn-1" };
      let cursor = 1n << 22n;
      yield {
        event: { ...base, cursor, event: { case: "turnStarted", value: { turnIndex: 1n } } },
      };
      let count = 0;
      for await (const delta of stampedDeltas(text)) {
        count++;
        cursor += BigInt(STAMP_CHARS);
        yield { event: { ...base, cursor, event: { case: "textDelta", value: { text: delta } } } };
      }
      yield {
        event: {
          ...base,
          cursor: cursor + (1n << 22n),
          event: {
            case: "turnCompleted",
            value: {
              headRevision: 1n,
              outcome: {
                kind: {
                  case: "finished",
                  value: { reason: FinishReason.ASSISTANT_MESSAGE, value: `${count} deltas` },
                },
              },
            },
          },
        },
      };
    },
  };
  const server = http2.createServer(
    connectNodeAdapter({ routes: (router: ConnectRouter) => router.service(TurnService, impl) }),
  );
  const sessions = new Set<http2.Http2Session>();
  server.on("connection", (socket: net.Socket) => socket.setNoDelay(true));
  server.on("session", (s: http2.Http2Session) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    name: "ceiling",
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sessions) s.destroy();
      }),
  };
}

type Client = ReturnType<typeof createClient<typeof TurnService>>;

async function runTurn(client: Client, sessionId: string, text: string, keepLatency: boolean) {
  const tally = newTally();
  const requested = performance.now();
  for await (const r of client.streamTurn({
    sessionId,
    input: [{ kind: { case: "text", value: text } }],
  })) {
    const e = r.event?.event;
    if (e?.case === "textDelta") {
      tallyDelta(tally, e.value.text, requested, keepLatency);
    } else if (e?.case === "turnCompleted") {
      tally.completed = e.value.outcome?.kind.case === "finished";
    }
  }
  if (!tally.completed) throw new Error(`${sessionId}: the turn did not finish`);
  return tally;
}

let sessionSeq = 0;
const nextSession = (prefix: string) => `${prefix}-${++sessionSeq}`;

/** (a): lanes run burst turns back to back for a fixed time; deltas received per second. */
async function burst(client: Client, name: string, lanes: number): Promise<number> {
  const stopAt = performance.now() + BURST_SECONDS * 1000;
  let deltas = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (performance.now() < stopAt) {
        // Not `deltas += await ...`: that reads `deltas` before the await and loses the other
        // lanes' counts.
        const tally = await runTurn(
          client,
          nextSession(`${name}-burst`),
          shape(BURST_DELTAS, 0),
          false,
        );
        deltas += tally.deltas;
      }
    }),
  );
  return deltas / ((performance.now() - t0) / 1000);
}

/** (b) and (c): the paced ramp, each gRPC turn on a session of its own. */
const grpcRunner =
  (client: Client, name: string): TurnRunner =>
  () =>
    Promise.resolve((text, keep) => runTurn(client, nextSession(`${name}-paced`), text, keep));

const paceOptions = { deltas: PACED_DELTAS, paceMs: PACE_MS, levels: LEVELS };
const ramp = (run: TurnRunner, stopAfter: number) => rampWith(run, { ...paceOptions, stopAfter });

function clientFor(target: Target): Client {
  return createClient(
    TurnService,
    createGrpcTransport({
      baseUrl: `http://127.0.0.1:${target.port}`,
      // Small frames go out at once: the latency measured is Tether's, not Nagle's.
      nodeOptions: {
        createConnection: () =>
          net.connect({
            host: "127.0.0.1",
            port: target.port,
            noDelay: true,
          }),
      },
    }),
  );
}

async function main(): Promise<void> {
  const tether = await startTether();
  const ceiling = await startCeiling();
  const clients = new Map([
    [tether, clientFor(tether)],
    [ceiling, clientFor(ceiling)],
  ]);
  try {
    // Warm both paths (JIT, HTTP/2 sessions) before anything is measured.
    for (const [target, client] of clients) {
      await Promise.all(
        Array.from({ length: Math.max(...BURST_LANES) }, () =>
          runTurn(client, nextSession(`${target.name}-warm`), shape(BURST_DELTAS, 0), false),
        ),
      );
    }
    // (a) per lane count, rounds alternate between the two and each keeps its best.
    const rates = BURST_LANES.map((lanes) => ({ lanes, tether: 0, ceiling: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const rate of rates) {
        for (const [target, client] of clients) {
          const measured = await burst(client, target.name, rate.lanes);
          if (target === tether) rate.tether = Math.max(rate.tether, measured);
          else rate.ceiling = Math.max(rate.ceiling, measured);
        }
      }
    }
    // (b) the ceiling first, so Tether's ramp is not cut short by the budget.
    // (b) the ceiling first, so Tether's ramps are not cut short by the budget; then (c) gRPC and
    // SSE on the same server, level by level (SSE warmed first).
    const stopAfter = started + BUDGET_MS;
    const ceilingRamp = await ramp(
      grpcRunner(clients.get(ceiling) as Client, "ceiling"),
      stopAfter,
    );
    const sse = await createSseRunner(tether.port);
    const [tetherRamp, sseRamp] = await (async () => {
      try {
        await Promise.all(
          Array.from({ length: 4 }, async () => (await sse.run())(shape(BURST_DELTAS, 0), false)),
        );
        return await rampTogether([grpcRunner(clients.get(tether) as Client, "tether"), sse.run], {
          ...paceOptions,
          stopAfter: performance.now() + TETHER_BUDGET_MS,
        });
      } finally {
        sse.close();
      }
    })();
    if (!tetherRamp || !sseRamp) throw new Error("the ramps returned no result");

    const headline = rates[0] ?? { lanes: 0, tether: 0, ceiling: 0 };
    const deltasS = headline.tether;
    const ceilingDeltasS = headline.ceiling;
    const rows: Record<string, string | number>[] = rates.map((r) => ({
      measure: `burst: deltas/s (${r.lanes} lane${r.lanes === 1 ? "" : "s"}, ${BURST_DELTAS} deltas/turn)`,
      tether: r.tether,
      "tether sse": "-",
      ceiling: r.ceiling,
      ratio: `${((r.tether / r.ceiling) * 100).toFixed(0)}%`,
    }));
    const byLevel = (r: LevelResult[], n: number) => r.find((l) => l.streams === n);
    for (const n of LEVELS) {
      const t = byLevel(tetherRamp.levels, n);
      const c = byLevel(ceilingRamp.levels, n);
      const e = byLevel(sseRamp.levels, n);
      if (!t && !c && !e) continue;
      const cell = (l: LevelResult | undefined) =>
        l
          ? `p50 ${l.p50Ms.toFixed(1)} / p99 ${l.p99Ms.toFixed(1)} ms${l.retried ? " (2nd run)" : ""}; ` +
            `first ${l.firstDeltaP50Ms.toFixed(0)} / ${l.firstDeltaP99Ms.toFixed(0)} ms; ` +
            `${l.peakStreaming} at once`
          : "-";
      rows.push({
        measure: `paced: ${n} streams (1 delta / ${PACE_MS} ms)`,
        tether: cell(t),
        "tether sse": cell(e),
        ceiling: cell(c),
        ratio: "",
      });
    }
    printTable(rows);
    const report = {
      bench: "stream",
      deltas_s: Math.round(deltasS),
      ceiling_deltas_s: Math.round(ceilingDeltasS),
      ratio: Number((deltasS / ceilingDeltasS).toFixed(3)),
      concurrent_streams: tetherRamp.best?.streams ?? 0,
      p99_delta_ms: Number((tetherRamp.best?.p99Ms ?? Number.NaN).toFixed(2)),
      ceiling_concurrent_streams: ceilingRamp.best?.streams ?? 0,
      ceiling_p99_delta_ms: Number((ceilingRamp.best?.p99Ms ?? Number.NaN).toFixed(2)),
      ramp_capped: (tetherRamp.best?.streams ?? 0) === LEVELS.at(-1),
      concurrency_ratio: Number(
        ((tetherRamp.best?.streams ?? 0) / (ceilingRamp.best?.streams ?? 1)).toFixed(3),
      ),
      sse_concurrent_streams: sseRamp.best?.streams ?? 0,
      sse_p99_delta_ms: Number((sseRamp.best?.p99Ms ?? Number.NaN).toFixed(2)),
      // The most turns streaming at one moment at each ramp's best level.
      peak_streaming_at_best: {
        tether: tetherRamp.best?.peakStreaming ?? 0,
        sse: sseRamp.best?.peakStreaming ?? 0,
        ceiling: ceilingRamp.best?.peakStreaming ?? 0,
      },
      sse_ramp_capped: (sseRamp.best?.streams ?? 0) === LEVELS.at(-1),
      sse_vs_grpc: Number(
        ((sseRamp.best?.streams ?? 0) / (tetherRamp.best?.streams ?? 1)).toFixed(3),
      ),
      turn_starts_per_iteration: tetherConfig.turnStartsPerIteration,
      retried_levels: {
        tether: tetherRamp.levels.filter((l) => l.retried).map((l) => l.streams),
        ceiling: ceilingRamp.levels.filter((l) => l.retried).map((l) => l.streams),
        sse: sseRamp.levels.filter((l) => l.retried).map((l) => l.streams),
      },
      burst: {
        lanes: headline.lanes,
        by_lanes: rates.map((r) => ({
          lanes: r.lanes,
          deltas_s: Math.round(r.tether),
          ceiling_deltas_s: Math.round(r.ceiling),
        })),
        deltas_per_turn: BURST_DELTAS,
        seconds: BURST_SECONDS,
        rounds: ROUNDS,
      },
      paced: {
        deltas_per_turn: PACED_DELTAS,
        pace_ms: PACE_MS,
        p99_limit_ms: P99_LIMIT_MS,
        first_delta_ms_at_best: {
          tether: firstDeltaOf(tetherRamp.best),
          ceiling: firstDeltaOf(ceilingRamp.best),
          sse: firstDeltaOf(sseRamp.best),
        },
      },
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
    };
    console.log(JSON.stringify(report));
  } finally {
    await tether.close();
    await ceiling.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
