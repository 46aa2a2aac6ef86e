// The engine-to-log vocabulary, one row per engine event kind: what the session log records.
import { describe, expect, test } from "vitest";
import { parseSessionId } from "../../../../src/domain/ids.js";
import type { SessionEvent } from "../../../../src/domain/session-events.js";
import type { TurnEvent } from "../../../../src/domain/turn-events.js";
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

const ROWS: [string, TurnEvent[], SessionEvent[]][] = [
  [
    "text passes through as it is",
    [{ type: "text_delta", text: "hi" }],
    [{ type: "text_delta", text: "hi" }],
  ],
  ["a proposed call alone shows nothing (it may never start)", [proposed("search")], []],
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
  [
    "usage is reported per model call, without the running total",
    [{ type: "usage", iteration: 2, usage, total: usage }],
    [{ type: "usage_reported", usage, iteration: 2 }],
  ],
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
  [
    "a tool value is carried as JSON",
    [{ type: "tool_final_value", toolName: "finish", callId: "c1", value: { ok: true } }],
    [{ type: "tool_value", valueJson: '{"ok":true}' }],
  ],
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
  [
    "reasoning and truncation pass through as they are",
    [
      { type: "reasoning_delta", text: "thinking" },
      { type: "output_truncated", iteration: 3 },
    ],
    [
      { type: "reasoning_delta", text: "thinking" },
      { type: "output_truncated", iteration: 3 },
    ],
  ],
  [
    "the final value and the terminal event map to nothing (the commit announces the end)",
    [
      { type: "final_value", text: "done" },
      {
        type: "terminal",
        outcome: { kind: "finished", reason: "assistant_message", text: "done" },
      },
    ],
    [],
  ],
];

describe("turn event mapper", () => {
  test.each(ROWS)("%s", async (_name, events, expected) => {
    expect(await mapped(events)).toEqual(expected);
  });

  test("covers every engine event kind", () => {
    const kinds = new Set(ROWS.flatMap(([, events]) => events.map((e) => e.type)));
    const all: TurnEvent["type"][] = [
      "text_delta",
      "tool_call_proposed",
      "tool_call_dispatched",
      "tool_result",
      "usage",
      "provider_retry",
      "reasoning_delta",
      "output_truncated",
      "checkpoint_admission",
      "final_value",
      "tool_final_value",
      "terminal",
    ];
    expect([...kinds].sort()).toEqual([...all].sort());
  });
});
