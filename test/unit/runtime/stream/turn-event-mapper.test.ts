// The engine-to-log vocabulary, rows keyed by engine event kind: what the session log records.
import { describe, expect, test } from "vitest";
import { parseSessionId } from "../../../../src/domain/ids.js";
import type { SessionEvent } from "../../../../src/domain/session-events.js";
import type { TurnEvent, TurnEventType } from "../../../../src/domain/turn-events.js";
import { createManualClock } from "../../../../src/ports/clock.js";
import { createTurnEventMapper } from "../../../../src/runtime/stream/turn-event-mapper.js";

const usage = {
  inputTokens: 3,
  outputTokens: 2,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};
const NOW = 1_700_000_000_000;
const KEY = "chat/turn-1/c1";

async function mapped(events: TurnEvent[]): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  const mapper = createTurnEventMapper(
    { emit: (e) => Promise.resolve(out.push(e)) },
    {
      sessionId: parseSessionId("tenant:chat"),
      turnId: "turn-1",
      clientToolNames: new Set(["ask_user"]),
      clientToolTimeoutMs: 5_000,
      clock: createManualClock(NOW),
    },
  );
  for (const e of events) await mapper.emit(e);
  return out;
}

const proposed = (toolName: string): TurnEvent => ({
  type: "tool_call_proposed",
  callId: "c1",
  toolName,
  argumentsJson: '{"q":1}',
});

/** One case: what it shows, the engine events fed in, and the session events the log gets. */
type Row = [name: string, events: TurnEvent[], expected: SessionEvent[]];

/**
 * The cases, keyed by the engine event kind each is about. The keys are the `TurnEvent` union
 * itself: a kind added to the engine without a row here is a type error (`npm run typecheck`).
 */
const ROWS: { [K in TurnEventType]: Row[] } = {
  text_delta: [
    [
      "text passes through as it is",
      [{ type: "text_delta", text: "hi" }],
      [{ type: "text_delta", text: "hi" }],
    ],
  ],
  tool_call_proposed: [
    ["a proposed call alone shows nothing (it may never start)", [proposed("search")], []],
  ],
  tool_call_dispatched: [
    [
      "a server-side call that starts is tool_call_started with its arguments and key",
      [proposed("search"), { type: "tool_call_dispatched", callId: "c1", toolName: "search" }],
      [
        {
          type: "tool_call_started",
          callId: "c1",
          toolName: "search",
          argumentsJson: '{"q":1}',
          idempotencyKey: KEY,
          origin: { kind: "server" },
        },
      ],
    ],
    [
      "a client tool's call is tool_call_requested with its deadline by the clock port",
      [proposed("ask_user"), { type: "tool_call_dispatched", callId: "c1", toolName: "ask_user" }],
      [
        {
          type: "tool_call_requested",
          callId: "c1",
          toolName: "ask_user",
          argumentsJson: '{"q":1}',
          idempotencyKey: KEY,
          deadlineMs: NOW + 5_000,
        },
      ],
    ],
  ],
  tool_result: [
    [
      "a result is tool_call_finished; any status but ok is an error",
      [
        { type: "tool_result", callId: "c1", toolName: "t", status: "ok", content: "fine" },
        { type: "tool_result", callId: "c2", toolName: "t", status: "timed_out", content: "late" },
      ],
      [
        {
          type: "tool_call_finished",
          callId: "c1",
          output: "fine",
          isError: false,
          origin: { kind: "server" },
        },
        {
          type: "tool_call_finished",
          callId: "c2",
          output: "late",
          isError: true,
          origin: { kind: "server" },
        },
      ],
    ],
    [
      "a started call's result carries its duration by the clock port",
      [
        proposed("search"),
        { type: "tool_call_dispatched", callId: "c1", toolName: "search" },
        { type: "tool_result", callId: "c1", toolName: "search", status: "ok", content: "r" },
      ],
      [
        {
          type: "tool_call_started",
          callId: "c1",
          toolName: "search",
          argumentsJson: '{"q":1}',
          idempotencyKey: KEY,
          origin: { kind: "server" },
        },
        {
          type: "tool_call_finished",
          callId: "c1",
          output: "r",
          isError: false,
          durationMs: 0,
          origin: { kind: "server" },
        },
      ],
    ],
  ],
  usage: [
    [
      "usage is reported per model call, without the running total",
      [{ type: "usage", iteration: 2, usage, total: usage }],
      [{ type: "usage_reported", usage, iteration: 2 }],
    ],
    [
      "a compaction's summary call keeps its purpose",
      [{ type: "usage", iteration: 1, usage, total: usage, purpose: "compaction" }],
      [{ type: "usage_reported", usage, iteration: 1, purpose: "compaction" }],
    ],
  ],
  checkpoint_admission: [
    [
      "admitted input names its ids",
      [
        {
          type: "checkpoint_admission",
          checkpoint: "after_work",
          sources: [
            { kind: "steer", id: "in-1" },
            { kind: "queued_work", id: "b-1" },
          ],
        },
      ],
      [{ type: "input_admitted", inputIds: ["in-1", "b-1"] }],
    ],
  ],
  tool_final_value: [
    [
      "a tool value is carried as JSON",
      [{ type: "tool_final_value", toolName: "finish", callId: "c1", value: { ok: true } }],
      [{ type: "tool_value", valueJson: '{"ok":true}' }],
    ],
  ],
  provider_retry: [
    [
      "a retry is shown with its attempt, delay and cause",
      [
        {
          type: "provider_retry",
          iteration: 1,
          attempt: 2,
          delayMs: 10,
          status: 503,
          reason: "busy",
        },
      ],
      [
        {
          type: "provider_retry",
          iteration: 1,
          attempt: 2,
          delayMs: 10,
          status: 503,
          reason: "busy",
        },
      ],
    ],
  ],
  reasoning_delta: [
    [
      "reasoning passes through as it is",
      [{ type: "reasoning_delta", text: "thinking" }],
      [{ type: "reasoning_delta", text: "thinking" }],
    ],
  ],
  output_truncated: [
    [
      "a truncated model call passes through with its iteration",
      [{ type: "output_truncated", iteration: 3 }],
      [{ type: "output_truncated", iteration: 3 }],
    ],
  ],
  budget_reached: [
    [
      "a budget that stops the turn passes through with its scope, limit, max and spend",
      [{ type: "budget_reached", scope: "turn", limit: "output_tokens", max: 20, spent: 24 }],
      [{ type: "budget_reached", scope: "turn", limit: "output_tokens", max: 20, spent: 24 }],
    ],
    [
      "a cost budget refusing an unpriced model names the model",
      [
        {
          type: "budget_reached",
          scope: "session",
          limit: "cost_micros",
          max: 500,
          spent: 0,
          unpricedModel: "m-new",
        },
      ],
      [
        {
          type: "budget_reached",
          scope: "session",
          limit: "cost_micros",
          max: 500,
          spent: 0,
          unpricedModel: "m-new",
        },
      ],
    ],
  ],
  context_compacted: [
    [
      "a compaction passes through with its token counts, reach and mode",
      [
        {
          type: "context_compacted",
          tokensBefore: 21_000,
          tokensAfter: 1_200,
          coversThroughMessage: 38,
          mode: "summarize",
          clearedToolResults: 2,
        },
      ],
      [
        {
          type: "context_compacted",
          tokensBefore: 21_000,
          tokensAfter: 1_200,
          coversThroughMessage: 38,
          mode: "summarize",
          clearedToolResults: 2,
        },
      ],
    ],
  ],
  final_value: [
    [
      "the final value maps to nothing (the commit announces it in turn_completed)",
      [{ type: "final_value", text: "done" }],
      [],
    ],
  ],
  terminal: [
    [
      "the terminal event maps to nothing (the commit announces the end)",
      [
        {
          type: "terminal",
          outcome: { kind: "finished", reason: "assistant_message", text: "done" },
        },
      ],
      [],
    ],
  ],
};

const KINDS = Object.keys(ROWS) as TurnEventType[];
const CASES = KINDS.flatMap((kind) => ROWS[kind].map((row) => [kind, ...row] as const));

describe("turn event mapper", () => {
  test.each(CASES)("%s: %s", async (_kind, _name, events, expected) => {
    expect(await mapped(events)).toEqual(expected);
  });

  test("covers every engine event kind, each under a row that feeds it", () => {
    // The key set is checked by the compiler against TurnEvent; here, that each kind has a row
    // and every row under a kind does feed that kind to the mapper.
    for (const kind of KINDS) {
      expect(ROWS[kind].length, kind).toBeGreaterThan(0);
      for (const [name, events] of ROWS[kind]) {
        expect(
          events.map((e) => e.type),
          `${kind}: ${name}`,
        ).toContain(kind);
      }
    }
  });
});
