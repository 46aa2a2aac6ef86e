// Engine overhead per turn: the turn engine against the scripted provider at zero latency,
// compared in the same run with a bare loop that only forwards the same provider events (the
// ceiling). One process, one core, turns run back to back. Prints a table, then one JSON line.
import { performance } from "node:perf_hooks";
import type { Message, ToolCallPart } from "../../src/domain/conversation.js";
import { createTurnEngine, type TurnEngine } from "../../src/engine/index.js";
import type { TurnEventSink } from "../../src/ports/event-sink.js";
import type { ModelCall, ModelProvider, ModelStreamEvent } from "../../src/ports/model-provider.js";
import { systemSleep } from "../../src/ports/sleep.js";
import type { ToolExecutor } from "../../src/ports/tool-executor.js";
import { createScriptedProvider, type ScriptedCall } from "../../src/providers/scripted.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 20_000);
const WARMUP = Math.min(5_000, Math.ceil(TURNS / 4));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DELTAS = 8;

const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

function textCall(prefix: string): ScriptedCall {
  const events: ModelStreamEvent[] = [];
  let full = "";
  for (let i = 0; i < DELTAS; i++) {
    const t = `${prefix} word${i} `;
    full += t;
    events.push({ type: "text_delta", text: t });
  }
  events.push({ type: "usage", usage: usage(120, DELTAS * 2) });
  return { events, response: { fullText: full, parts: [{ type: "text", text: full }] } };
}

const toolCall: ScriptedCall = {
  events: [
    { type: "text_delta", text: "Looking it up." },
    {
      type: "part",
      part: { type: "tool_call", callId: "call-1", toolName: "lookup", argumentsJson: '{"q":"x"}' },
    },
    { type: "usage", usage: usage(100, 12) },
  ],
};
const answer = textCall("answer");
const plain = textCall("plain");

interface Workload {
  name: string;
  /** Which scripted call answers a request. */
  pick: (messages: readonly Message[]) => ScriptedCall;
}

const workloads: Workload[] = [
  {
    name: "tool round (2 model calls, 1 tool)",
    pick: (m) => (m.at(-1)?.role === "tool" ? answer : toolCall),
  },
  { name: "text only (1 model call)", pick: () => plain },
];

const tools: ToolExecutor = {
  definitions: () => [{ name: "lookup", description: "find", inputSchema: { type: "object" } }],
  execute: () => Promise.resolve({ output: { found: true } }),
};

let sunk = 0;
const sink: TurnEventSink = {
  emit: () => {
    sunk++;
  },
};

function providerFor(w: Workload): ModelProvider {
  return createScriptedProvider({ recordRequests: false, script: (req) => w.pick(req.messages) });
}

const input = [{ type: "text" as const, text: "question" }];

/**
 * The ceiling: the same provider calls with every event forwarded to the sink, and the same tool
 * executor answering the tool call; no reconciliation, dispatch bookkeeping, limits or events.
 */
async function bareTurn(provider: ModelProvider): Promise<void> {
  const signal = new AbortController().signal;
  const messages: Message[] = [{ role: "user", content: input }];
  for (;;) {
    const call: ModelCall = provider.call({ messages, tools: [], options: {}, signal });
    let toolCall: ToolCallPart | undefined;
    for (;;) {
      const step = await call.next();
      if (step.done === true) break;
      const event = step.value;
      const r = sink.emit({
        type: "text_delta",
        text: event.type === "text_delta" ? event.text : "",
      });
      if (r !== undefined) await r;
      if (event.type === "part" && event.part.type === "tool_call") toolCall = event.part;
    }
    if (toolCall === undefined) return;
    const result = await tools.execute(
      {
        callId: toolCall.callId,
        toolName: toolCall.toolName,
        arguments: {},
        argumentsJson: toolCall.argumentsJson,
      },
      { signal, turnId: "bare" },
    );
    messages.push({
      role: "tool",
      callId: toolCall.callId,
      toolName: toolCall.toolName,
      content: JSON.stringify(result.output),
      isError: false,
    });
  }
}

interface Sample {
  turnsPerSecond: number;
  latencies: Float64Array;
}

async function measure(run: () => Promise<void>, turns: number): Promise<Sample> {
  const latencies = new Float64Array(turns);
  const start = performance.now();
  for (let i = 0; i < turns; i++) {
    const t0 = performance.now();
    await run();
    latencies[i] = performance.now() - t0;
  }
  const elapsed = performance.now() - start;
  return { turnsPerSecond: (turns / elapsed) * 1000, latencies };
}

function percentile(values: Float64Array, p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

interface Result {
  name: string;
  engine: number;
  ceiling: number;
  /** Median over rounds of the paired engine/ceiling ratio. */
  ratio: number;
  p50: number;
  p99: number;
  ceilingP99: number;
}

async function runWorkload(w: Workload): Promise<Result> {
  const provider = providerFor(w);
  const engine: TurnEngine = createTurnEngine({
    provider,
    tools,
    sleep: systemSleep,
    // Timeouts off: the ceiling sets no timer either, and a tool that answers at once never needs one.
    toolTimeoutMs: 0,
  });
  let n = 0;
  const engineTurn = async (): Promise<void> => {
    // A turn gets its own cancellation signal, as the runtime gives it; so does the bare loop.
    const signal = new AbortController().signal;
    const r = await engine.runTurn({ turnId: `t${n++}`, input, sink, signal });
    if (r.outcome.kind !== "finished") throw new Error(`unexpected outcome ${r.outcome.reason}`);
  };
  const ceilingTurn = (): Promise<void> => bareTurn(provider);

  await measure(engineTurn, WARMUP);
  await measure(ceilingTurn, WARMUP);
  const engineRates: number[] = [];
  const ceilingRates: number[] = [];
  const engineLatencies: Float64Array[] = [];
  const ceilingLatencies: Float64Array[] = [];
  // Alternate rounds so drift (GC, CPU frequency) hits both loops alike.
  for (let r = 0; r < ROUNDS; r++) {
    const e = await measure(engineTurn, TURNS);
    const c = await measure(ceilingTurn, TURNS);
    engineRates.push(e.turnsPerSecond);
    ceilingRates.push(c.turnsPerSecond);
    engineLatencies.push(e.latencies);
    ceilingLatencies.push(c.latencies);
  }
  const all = (xs: Float64Array[]): Float64Array => {
    const out = new Float64Array(xs.reduce((s, x) => s + x.length, 0));
    let o = 0;
    for (const x of xs) {
      out.set(x, o);
      o += x.length;
    }
    return out;
  };
  const engineAll = all(engineLatencies);
  return {
    name: w.name,
    engine: median(engineRates),
    ceiling: median(ceilingRates),
    ratio: median(engineRates.map((e, i) => e / (ceilingRates[i] ?? e))),
    p50: percentile(engineAll, 50),
    p99: percentile(engineAll, 99),
    ceilingP99: percentile(all(ceilingLatencies), 99),
  };
}

const results: Result[] = [];
for (const w of workloads) results.push(await runWorkload(w));

const fmt = (x: number, d = 0): string => x.toFixed(d);
console.log(
  `engine overhead, scripted provider at zero latency, ${TURNS} turns x ${ROUNDS} rounds`,
);
console.log(
  [
    "workload".padEnd(36),
    "engine t/s".padStart(11),
    "ceiling t/s".padStart(12),
    "ratio".padStart(6),
    "p50 ms".padStart(8),
    "p99 ms".padStart(8),
  ].join(" "),
);
for (const r of results) {
  console.log(
    [
      r.name.padEnd(36),
      fmt(r.engine).padStart(11),
      fmt(r.ceiling).padStart(12),
      fmt(r.ratio, 2).padStart(6),
      fmt(r.p50, 4).padStart(8),
      fmt(r.p99, 4).padStart(8),
    ].join(" "),
  );
}
const main = results[0];
if (main === undefined || sunk === 0) throw new Error("no results");
console.log(
  JSON.stringify({
    bench: "engine",
    workload: main.name,
    engine_turns_s: Math.round(main.engine),
    ceiling_turns_s: Math.round(main.ceiling),
    ratio: Number(main.ratio.toFixed(3)),
    p50_ms: Number(main.p50.toFixed(4)),
    p99_ms: Number(main.p99.toFixed(4)),
    ceiling_p99_ms: Number(main.ceilingP99.toFixed(4)),
    text_only: {
      engine_turns_s: Math.round(results[1]?.engine ?? 0),
      ceiling_turns_s: Math.round(results[1]?.ceiling ?? 0),
      ratio: Number((results[1]?.ratio ?? 0).toFixed(3)),
      p99_ms: Number((results[1]?.p99 ?? 0).toFixed(4)),
    },
    turns: TURNS,
    rounds: ROUNDS,
    node: process.version,
  }),
);
