// The engine closes the open batch of a turn that will not go on: every call gets one answer
// (the result it has, or an error saying why it did not run), and the result is the engine's own.
import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../../../src/domain/turn-events.js";
import { closeTurn, type TurnProgress } from "../../../src/engine/index.js";

const progress: TurnProgress = {
  messages: [
    {
      role: "assistant",
      parts: [
        { type: "tool_call", callId: "a-1", toolName: "lookup", argumentsJson: '{"q":1}' },
        { type: "tool_call", callId: "b-1", toolName: "send", argumentsJson: "{}" },
      ],
    },
  ],
  toolCalls: [],
  usage: {
    inputTokens: 10,
    outputTokens: 4,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  },
  iterations: 1,
  assistantText: "",
  batch: [
    { type: "tool_call", callId: "a-1", toolName: "lookup", argumentsJson: '{"q":1}' },
    { type: "tool_call", callId: "b-1", toolName: "send", argumentsJson: "{}" },
  ],
};

describe("closeTurn", () => {
  it("pairs every open call, keeps known results and ends with the stop", async () => {
    const events: TurnEvent[] = [];
    const result = await closeTurn({
      turnId: "turn-9",
      progress,
      outcome: { kind: "stopped", reason: "cancelled" },
      resultOf: (callId) => (callId === "a-1" ? { output: { found: true } } : undefined),
      unrun: "not run: cancelled",
      sink: { emit: (e) => void events.push(e) },
    });
    expect(result.turnId).toBe("turn-9");
    expect(result.outcome).toEqual({ kind: "stopped", reason: "cancelled" });
    expect(result.messages.slice(1)).toEqual([
      {
        role: "tool",
        callId: "a-1",
        toolName: "lookup",
        content: '{"found":true}',
        isError: false,
      },
      {
        role: "tool",
        callId: "b-1",
        toolName: "send",
        content: "not run: cancelled",
        isError: true,
      },
    ]);
    expect(result.toolCalls.map((c) => [c.callId, c.status, c.argumentsJson])).toEqual([
      ["a-1", "ok", '{"q":1}'],
      ["b-1", "error", "{}"],
    ]);
    expect(result.usage.inputTokens).toBe(10);
    expect(result.iterations).toBe(1);
    expect(events).toEqual([
      {
        type: "tool_result",
        callId: "a-1",
        toolName: "lookup",
        status: "ok",
        content: '{"found":true}',
      },
      {
        type: "tool_result",
        callId: "b-1",
        toolName: "send",
        status: "error",
        content: "not run: cancelled",
      },
      { type: "terminal", outcome: { kind: "stopped", reason: "cancelled" } },
    ]);
  });
});
