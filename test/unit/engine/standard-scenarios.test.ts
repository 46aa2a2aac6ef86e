// The ten standard-runtime scenarios: stream reconciliation, tool control, cancellation, usage.
import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../../../src/domain/turn-events.js";
import {
  assistantMessages,
  echoTool,
  engineWith,
  recordingSink,
  text,
  toolCall,
  toolsOf,
  unansweredToolCalls,
} from "./helpers.js";

const hi = [{ type: "text" as const, text: "hi" }];

describe("standard runtime scenarios", () => {
  it("1 assembles a stream-only text response", async () => {
    const { engine } = engineWith([
      {
        events: [
          { type: "text_delta", text: "What time " },
          { type: "text_delta", text: "is it?" },
          {
            type: "usage",
            usage: {
              inputTokens: 11,
              outputTokens: 4,
              cacheReadTokens: 0,
              cacheWriteTokens: 0,
              reasoningTokens: 0,
            },
          },
        ],
        response: { fullText: "What time is it?", parts: [text("What time is it?")] },
      },
    ]);
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "stream-only-text-turn", input: hi, sink });

    expect(turn.outcome).toEqual({
      kind: "finished",
      reason: "assistant_message",
      text: "What time is it?",
    });
    expect(turn.assistantText).toBe("What time is it?");
    const assistants = assistantMessages(turn.messages);
    expect(assistants).toHaveLength(1);
    expect(assistants[0]).toEqual({ role: "assistant", parts: [text("What time is it?")] });
    expect(sink.streamedText()).toBe("What time is it?");
  });

  it("2 recovers the streamed text when the final response is empty", async () => {
    const expected =
      "I’m continuing with a type-safety cleanup now: replace the remaining raw JSON paths.";
    const { engine } = engineWith([
      {
        events: [
          { type: "text_delta", text: "I’m continuing with a type-safety cleanup now: " },
          { type: "text_delta", text: "replace the remaining raw JSON paths." },
        ],
      },
    ]);
    const sink = recordingSink();
    const turn = await engine.runTurn({
      turnId: "recover-streamed-text-turn",
      input: [{ type: "text", text: "continue" }],
      sink,
    });

    expect(turn.outcome.kind).toBe("finished");
    expect(turn.outcome.reason).toBe("assistant_message");
    expect(turn.assistantText).toBe(expected);
    const assistants = assistantMessages(turn.messages);
    expect(assistants).toHaveLength(1);
    expect(assistants[0]).toEqual({ role: "assistant", parts: [text(expected)] });
    expect(sink.streamedText()).toBe(expected);
  });

  it("3 reconciles a text part without a streaming duplicate", async () => {
    const { engine } = engineWith([
      {
        events: [
          { type: "text_delta", text: "The sentence." },
          { type: "part", part: text("The sentence.") },
        ],
      },
    ]);
    const sink = recordingSink();
    const turn = await engine.runTurn({
      turnId: "text-part-no-duplicate-turn",
      input: [{ type: "text", text: "continue" }],
      sink,
    });

    expect(turn.assistantText).toBe("The sentence.");
    expect(sink.streamedText()).toBe("The sentence.");
  });

  it("4 cancels in-flight tool calls when the token fires", async () => {
    const cancel = new AbortController();
    let observedCancel = false;
    const tools = toolsOf({
      slow_tool: (_call, context) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve({ output: "finished slowly" }), 30_000);
          context.signal.addEventListener("abort", () => {
            observedCancel = true;
            clearTimeout(timer);
          });
          // The turn is cancelled once this call is under way.
          cancel.abort();
        }),
    });
    const { engine, provider } = engineWith(
      [
        {
          events: [
            { type: "part", part: toolCall("slow-1", "slow_tool") },
            {
              type: "usage",
              usage: {
                inputTokens: 10,
                outputTokens: 1,
                cacheReadTokens: 0,
                cacheWriteTokens: 0,
                reasoningTokens: 0,
              },
            },
          ],
        },
        { response: { fullText: "stopped", parts: [text("stopped")] } },
      ],
      { tools },
    );
    const sink = recordingSink();
    const start = performance.now();
    const turn = await engine.runTurn({
      turnId: "cancel-tool-turn",
      input: [{ type: "text", text: "trigger slow tool" }],
      signal: cancel.signal,
      sink,
    });
    const elapsed = performance.now() - start;

    expect(elapsed).toBeLessThan(2000);
    expect(observedCancel).toBe(true);
    expect(turn.outcome).toEqual({ kind: "stopped", reason: "cancelled" });
    expect(provider.callCount).toBe(1);
    // The history stays valid for the next provider call: the call has its synthetic result.
    expect(turn.messages.at(-1)).toEqual({
      role: "tool",
      callId: "slow-1",
      toolName: "slow_tool",
      content: '{"error":"cancelled: the turn was cancelled before this tool call finished"}',
      isError: true,
    });
    expect(unansweredToolCalls(turn.messages)).toEqual([]);
    expect(sink.events.at(-1)).toEqual({
      type: "terminal",
      outcome: { kind: "stopped", reason: "cancelled" },
    });
  });

  it("5 tool control finish emits the terminal output", async () => {
    const values = ["first", "second"];
    const tools = toolsOf({
      terminal_tool_0: () =>
        Promise.resolve({
          output: "done 0",
          control: { type: "finish", value: values[0] ?? null },
        }),
      terminal_tool_1: () =>
        Promise.resolve({
          output: "done 1",
          control: { type: "finish", value: values[1] ?? null },
        }),
    });
    const { engine, provider } = engineWith(
      [
        {
          response: {
            parts: [toolCall("tool-1", "terminal_tool_0"), toolCall("tool-2", "terminal_tool_1")],
          },
        },
        { response: { fullText: "unexpected follow-up", parts: [text("unexpected follow-up")] } },
      ],
      { tools },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({
      turnId: "terminal-tool-finish-turn",
      input: [{ type: "text", text: "run terminal tools" }],
      sink,
    });

    expect(turn.outcome).toEqual({
      kind: "finished",
      reason: "tool_value",
      toolName: "terminal_tool_0",
      callId: "tool-1",
      value: "first",
    });
    expect(turn.toolCalls).toHaveLength(2);
    expect(provider.callCount).toBe(1);
    const completed = (name: string): number =>
      sink.events.findIndex((e) => e.type === "tool_result" && e.toolName === name);
    const terminalOutput = sink.events.findIndex((e) => e.type === "tool_final_value");
    expect(completed("terminal_tool_0")).toBeGreaterThanOrEqual(0);
    expect(completed("terminal_tool_1")).toBeGreaterThanOrEqual(0);
    expect(terminalOutput).toBeGreaterThan(completed("terminal_tool_0"));
    expect(terminalOutput).toBeGreaterThan(completed("terminal_tool_1"));
    expect(sink.events[terminalOutput]).toEqual({
      type: "tool_final_value",
      toolName: "terminal_tool_0",
      callId: "tool-1",
      value: "first",
    });
    expect(sink.types().slice(-2)).toEqual(["tool_final_value", "terminal"]);
  });

  it("6 tool control fail stops with no terminal output event", async () => {
    const tools = toolsOf({
      terminal_tool_0: () =>
        Promise.resolve({
          output: "failed",
          isError: true,
          control: { type: "fail", code: "terminal_control_failed", message: "failed" },
        }),
    });
    const { engine, provider } = engineWith(
      [
        { response: { parts: [toolCall("tool-1", "terminal_tool_0")] } },
        { response: { fullText: "unexpected follow-up", parts: [text("unexpected follow-up")] } },
      ],
      { tools },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({
      turnId: "terminal-tool-fail-turn",
      input: [{ type: "text", text: "run failing terminal tool" }],
      sink,
    });

    expect(turn.outcome).toEqual({
      kind: "stopped",
      reason: "tool_error",
      toolName: "terminal_tool_0",
      callId: "tool-1",
      code: "terminal_control_failed",
      message: "failed",
    });
    expect(provider.callCount).toBe(1);
    expect(sink.events.some((e) => e.type === "final_value" || e.type === "tool_final_value")).toBe(
      false,
    );
    expect(sink.types().filter((t) => t === "terminal")).toHaveLength(1);
  });

  it("7 executes a streamed tool call when the final response is empty", async () => {
    const { engine } = engineWith(
      [
        {
          events: [
            { type: "part", part: toolCall("tool-1", "echo_tool", '{"value":"sample"}') },
            {
              type: "usage",
              usage: {
                inputTokens: 12,
                outputTokens: 3,
                cacheReadTokens: 0,
                cacheWriteTokens: 0,
                reasoningTokens: 0,
              },
            },
          ],
        },
        { response: { fullText: "done", parts: [text("done")] } },
      ],
      { tools: toolsOf({ echo_tool: echoTool }) },
    );
    const turn = await engine.runTurn({
      turnId: "streamed-tool-call-turn",
      input: [{ type: "text", text: "run the tool" }],
    });

    expect(turn.assistantText).toBe("done");
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]?.callId).toBe("tool-1");
    expect(turn.toolCalls[0]?.output).toEqual({ payload: "raw:sample" });
  });

  it("8 preserves part boundaries when the response is not streamed", async () => {
    const { engine } = engineWith([
      {
        response: {
          fullText: "Intro paragraph.\n\n## Heading",
          parts: [text("Intro paragraph."), text("## Heading")],
        },
      },
    ]);
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "part-boundaries-turn", input: hi, sink });

    expect(turn.assistantText).toBe("Intro paragraph.\n\n## Heading");
    expect(sink.streamedText()).toBe("Intro paragraph.\n\n## Heading");
    expect(assistantMessages(turn.messages)).toEqual([
      { role: "assistant", parts: [text("Intro paragraph.\n\n## Heading")] },
    ]);
  });

  it("9 uses the streamed usage when the final usage is missing", async () => {
    const { engine } = engineWith([
      {
        events: [
          { type: "text_delta", text: "Hi" },
          {
            type: "usage",
            usage: {
              inputTokens: 9,
              outputTokens: 3,
              cacheReadTokens: 2,
              cacheWriteTokens: 0,
              reasoningTokens: 0,
            },
          },
        ],
        response: {
          fullText: "Hi",
          parts: [text("Hi")],
          usage: {
            inputTokens: 0,
            outputTokens: 0,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
          },
        },
      },
    ]);
    const turn = await engine.runTurn({
      turnId: "streamed-usage-turn",
      input: [{ type: "text", text: "hello" }],
    });

    expect(turn.usage.inputTokens).toBe(9);
    expect(turn.usage.outputTokens).toBe(3);
    expect(turn.usage.cacheReadTokens).toBe(2);
  });

  it("10 prefers the final usage over the streamed usage", async () => {
    const { engine } = engineWith([
      {
        events: [
          { type: "text_delta", text: "Hi" },
          {
            type: "usage",
            usage: {
              inputTokens: 9,
              outputTokens: 3,
              cacheReadTokens: 2,
              cacheWriteTokens: 0,
              reasoningTokens: 0,
            },
          },
        ],
        response: {
          fullText: "Hi",
          parts: [text("Hi")],
          usage: {
            inputTokens: 12,
            outputTokens: 4,
            cacheReadTokens: 1,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
          },
        },
      },
    ]);
    const sink = recordingSink();
    const turn = await engine.runTurn({
      turnId: "final-usage-turn",
      input: [{ type: "text", text: "hello" }],
      sink,
    });

    expect(turn.usage.inputTokens).toBe(12);
    expect(turn.usage.outputTokens).toBe(4);
    expect(turn.usage.cacheReadTokens).toBe(1);
    const usageEvents = sink.events.filter(
      (e): e is Extract<TurnEvent, { type: "usage" }> => e.type === "usage",
    );
    expect(usageEvents).toHaveLength(1);
    expect(usageEvents[0]?.usage.inputTokens).toBe(12);
  });
});
