// Compaction benchmark: two 300-turn sessions with 4 KB answers on the memory runtime, each
// against its own fake OpenAI-compatible server, turns alternated so load from other processes
// lands on both. One session compacts (16k window, trigger 10k); the other does not (no window).
// Prints a table and one JSON line: max tokens sent per call, compactions, summary tokens, and
// p50/p99 turn time with compaction on and off. Sizes: BENCH_TURNS, BENCH_ANSWER_CHARS.
import { percentile, printTable } from "../support/stats.js";
import { startFakeOpenAI } from "../../test/support/fake-openai-server.js";
import { runLongSession, type LongSessionReport } from "../../test/support/long-session.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const ANSWER_CHARS = Number(process.env.BENCH_ANSWER_CHARS ?? 4096);
const WINDOW = 16_000;
const POLICY = { triggerTokens: 10_000, keepRecentTokens: 3_000 };

const on = await startFakeOpenAI({ contextLimit: WINDOW, answerChars: ANSWER_CHARS });
const off = await startFakeOpenAI({
  contextLimit: Number.MAX_SAFE_INTEGER,
  answerChars: ANSWER_CHARS,
});
let onReport: LongSessionReport | undefined;
let offReport: LongSessionReport | undefined;
const onMs: number[] = [];
const offMs: number[] = [];
let compactions = 0;
let summaryTokens = 0;
const failures: string[] = [];
for (let i = 0; i < TURNS; i++) {
  onReport = await runLongSession(on, "bench-on", 1, POLICY, onReport?.harness);
  offReport = await runLongSession(off, "bench-off", 1, undefined, offReport?.harness);
  onMs.push(...onReport.turnMs);
  offMs.push(...offReport.turnMs);
  compactions += onReport.compactions.length;
  summaryTokens += onReport.summaryUsageTokens;
  for (const o of [...onReport.outcomes, ...offReport.outcomes]) {
    if (o !== "finished:assistant_message") failures.push(o);
  }
}
await on.close();
await off.close();

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const round = (x: number) => Number(x.toFixed(2));
const result = {
  turns: TURNS,
  answerChars: ANSWER_CHARS,
  window: WINDOW,
  policy: POLICY,
  failedTurns: failures.length,
  compactions,
  summaryCalls: on.stats.summaryCalls,
  summaryTokens,
  maxPromptTokensOn: on.stats.maxPromptTokens,
  refusedOn: on.stats.refused,
  maxPromptTokensOff: off.stats.maxPromptTokens,
  p50MsOn: round(percentile(sorted(onMs), 50)),
  p99MsOn: round(percentile(sorted(onMs), 99)),
  p50MsOff: round(percentile(sorted(offMs), 50)),
  p99MsOff: round(percentile(sorted(offMs), 99)),
};
printTable([
  {
    compaction: "on",
    "p50 ms": result.p50MsOn,
    "p99 ms": result.p99MsOn,
    "max prompt tokens": result.maxPromptTokensOn,
    compactions,
    "summary tokens": summaryTokens,
  },
  {
    compaction: "off",
    "p50 ms": result.p50MsOff,
    "p99 ms": result.p99MsOff,
    "max prompt tokens": result.maxPromptTokensOff,
    compactions: 0,
    "summary tokens": 0,
  },
]);
console.log(JSON.stringify(result));
