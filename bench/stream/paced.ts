// The paced ramp of bench:stream, shared by its gRPC and SSE runs: `streams` turns at once, each
// streaming one delta every pace interval, ramped until the p99 latency from a delta's emission
// to its receipt passes the limit. A level that fails is run once more before the ramp stops
// (one stall of a shared machine should not end a ramp). How a turn is run is the caller's.
import { performance } from "node:perf_hooks";
import { percentile } from "../support/stats.js";

export const STAMP_CHARS = 16;
export const P99_LIMIT_MS = 50;

/** Every delta's text is its emission time, fixed width, so merged deltas still measure. */
export const stamp = (): string => performance.now().toFixed(3).padStart(STAMP_CHARS, "0");

export interface TurnTally {
  deltas: number;
  latenciesMs: number[];
  /** From the request to the first delta's receipt. */
  firstDeltaMs: number | undefined;
  /** When (performance.now()) the first and the last delta arrived. */
  firstAt: number;
  lastAt: number;
  completed: boolean;
}

export const newTally = (): TurnTally => ({
  deltas: 0,
  latenciesMs: [],
  firstDeltaMs: undefined,
  firstAt: 0,
  lastAt: 0,
  completed: false,
});

/** Counts the stamps of one received delta's text (deltas may arrive merged). */
export function tallyDelta(tally: TurnTally, text: string, requested: number, keep: boolean) {
  const now = performance.now();
  if (tally.firstDeltaMs === undefined) {
    tally.firstDeltaMs = now - requested;
    tally.firstAt = now;
  }
  tally.lastAt = now;
  for (let i = 0; i + STAMP_CHARS <= text.length; i += STAMP_CHARS) {
    tally.deltas++;
    if (keep) tally.latenciesMs.push(now - Number(text.slice(i, i + STAMP_CHARS)));
  }
}

/** Runs one turn with the given text (its shape) to its end; rejects if it did not finish. */
export type StartTurn = (text: string, keepLatency: boolean) => Promise<TurnTally>;

/**
 * Readies one turn (what a client does before its input: the SSE run's session and open stream;
 * nothing for gRPC, whose one request carries the input) and answers how to start it.
 */
export type TurnRunner = () => Promise<StartTurn>;

export interface LevelResult {
  streams: number;
  p50Ms: number;
  p99Ms: number;
  /** Request to first delta, over the level's turns. */
  firstDeltaP50Ms: number;
  firstDeltaP99Ms: number;
  deltas: number;
  /**
   * The most turns streaming at one moment (between their first and last delta): a level's
   * turns overlap less than its number when their starts queue for longer than a turn streams.
   */
  peakStreaming: number;
  /** The level failed once and this is its second run. */
  retried: boolean;
}

export interface PaceOptions {
  deltas: number;
  paceMs: number;
  levels: number[];
  /** The ramp stops before a level once this time (performance.now()) has passed. */
  stopAfter: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `streams` paced turns at once, their starts spread over one pace interval. */
export async function paced(
  run: TurnRunner,
  shape: string,
  streams: number,
  paceMs: number,
): Promise<LevelResult> {
  const latencies: number[] = [];
  const firstDeltas: number[] = [];
  const spans: [number, number][] = [];
  let deltas = 0;
  // Every turn readied first, then started: the starts spread over one pace interval either way.
  const starts = await Promise.all(Array.from({ length: streams }, () => run()));
  await Promise.all(
    starts.map(async (start, i) => {
      await sleep((i * paceMs) / streams);
      const tally = await start(shape, true);
      deltas += tally.deltas;
      for (const l of tally.latenciesMs) latencies.push(l);
      if (tally.firstDeltaMs !== undefined) {
        firstDeltas.push(tally.firstDeltaMs);
        spans.push([tally.firstAt, tally.lastAt]);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  firstDeltas.sort((a, b) => a - b);
  return {
    streams,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    firstDeltaP50Ms: percentile(firstDeltas, 50),
    firstDeltaP99Ms: percentile(firstDeltas, 99),
    deltas,
    peakStreaming: peakOverlap(spans),
    retried: false,
  };
}

/** The most spans open at one moment. */
function peakOverlap(spans: [number, number][]): number {
  const edges = spans.flatMap(([from, to]): [number, number][] => [
    [from, 1],
    [to, -1],
  ]);
  // At a tie an end counts before a start: touching spans do not overlap.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let peak = 0;
  for (const [, step] of edges) {
    open += step;
    peak = Math.max(peak, open);
  }
  return peak;
}

export interface RampResult {
  best: LevelResult | undefined;
  levels: LevelResult[];
}

export async function ramp(run: TurnRunner, options: PaceOptions): Promise<RampResult> {
  const [result] = await rampTogether([run], options);
  return result ?? { best: undefined, levels: [] };
}

/**
 * Several ramps stepped together: each level runs every runner still ramping, one after another,
 * so a shared machine's load drifting over the run weighs on all of them alike.
 */
export async function rampTogether(
  runs: TurnRunner[],
  options: PaceOptions,
): Promise<RampResult[]> {
  const shape = `${options.deltas} ${options.paceMs}`;
  const results: (RampResult & { done: boolean })[] = runs.map(() => ({
    best: undefined,
    levels: [],
    done: false,
  }));
  for (const streams of options.levels) {
    if (performance.now() > options.stopAfter) break;
    if (results.every((r) => r.done)) break;
    for (const [i, run] of runs.entries()) {
      const ramping = results[i];
      if (!ramping || ramping.done) continue;
      let result = await paced(run, shape, streams, options.paceMs);
      if (result.p99Ms > P99_LIMIT_MS) {
        result = { ...(await paced(run, shape, streams, options.paceMs)), retried: true };
      }
      ramping.levels.push(result);
      if (result.p99Ms > P99_LIMIT_MS) ramping.done = true;
      else ramping.best = result;
    }
  }
  return results.map(({ best, levels }) => ({ best, levels }));
}
