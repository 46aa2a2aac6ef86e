// Drives one session through many turns on the runtime (memory, or Redis when given) against the fake OpenAI server,
// and reports what the compaction figures need: outcomes, per-turn times, compactions, usage.
import { performance } from "node:perf_hooks";
import type { ContextManagement } from "../../src/domain/compaction.js";
import type { SessionEvent } from "../../src/domain/session-events.js";
import { createOpenAIChatProvider } from "../../src/providers/openai-chat.js";
import type { FakeOpenAIServer } from "./fake-openai-server.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  type RuntimeHarness,
  type RuntimeHarnessOptions,
} from "./runtime-harness.js";

export interface LongSessionReport {
  harness: RuntimeHarness;
  /** Outcome kind (and reason) of each turn, in order. */
  outcomes: string[];
  /** Wall time of each turn, stream open to turn_completed, in ms. */
  turnMs: number[];
  /** Head revision after each turn. */
  revisions: number[];
  /** context_compacted events, with the turn (1-based) each came in. */
  compactions: {
    turn: number;
    cursor: number;
    event: Extract<SessionEvent, { type: "context_compacted" }>;
  }[];
  /** Tokens of usage_reported events with purpose compaction (input + output). */
  summaryUsageTokens: number;
}

export async function runLongSession(
  server: FakeOpenAIServer,
  sessionId: string,
  turns: number,
  contextManagement: ContextManagement | undefined,
  harness?: RuntimeHarness,
  redis?: RuntimeHarnessOptions["redis"],
): Promise<LongSessionReport> {
  const h =
    harness ??
    createRuntimeHarness({
      provider: createOpenAIChatProvider({
        apiKey: "test-key",
        baseURL: server.baseURL,
        defaultModel: "fake-16k",
      }),
      ...(redis && { redis }),
    });
  const report: LongSessionReport = {
    harness: h,
    outcomes: [],
    turnMs: [],
    revisions: [],
    compactions: [],
    summaryUsageTokens: 0,
  };
  for (let turn = 1; turn <= turns; turn++) {
    const started = performance.now();
    const command = textCommand(sessionId, `Question ${turn}: tell me more about item ${turn}.`, {
      settings: contextManagement ? { contextManagement } : {},
    });
    const events = await collect(h.runtime.streamTurn(command, AbortSignal.timeout(30_000)));
    report.turnMs.push(performance.now() - started);
    for (const { event, cursor } of events) {
      if (event.type === "context_compacted") report.compactions.push({ turn, cursor, event });
      if (event.type === "usage_reported" && event.purpose === "compaction") {
        report.summaryUsageTokens += event.usage.inputTokens + event.usage.outputTokens;
      }
      if (event.type === "turn_completed") {
        report.outcomes.push(`${event.outcome.kind}:${event.outcome.reason}`);
        report.revisions.push(event.headRevision);
      }
    }
  }
  return report;
}
