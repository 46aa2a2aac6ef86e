// The engine beyond the standard scenarios: tool loops, limits, tool failures and concurrency.
import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../../../src/domain/turn-events.js";
import type { ScriptedCall } from "../../../src/providers/scripted.js";
import {
  engineWith,
  recordingSink,
  text,
  toolCall,
  toolsOf,
  unansweredToolCalls,
} from "./helpers.js";
import { sleep } from "../../support/wait-for.js";

const go = [{ type: "text" as const, text: "go" }];

function usageOf(input: number, output: number): ScriptedCall["response"] {
  return {
    usage: {
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
  };
}

describe("turn loop", () => {
  it("runs several tool rounds and sums usage over iterations", async () => {
    const tools = toolsOf({
      add: (call) => {
        const { a, b } = call.arguments as { a: number; b: number };
        return Promise.resolve({ output: a + b });
      },
    });
    const { engine, provider } = engineWith(
      [
        {
          response: {
            ...usageOf(10, 2),
            parts: [toolCall("c1", "add", '{"a":1,"b":2}')],
          },
        },
        {
          response: {
            ...usageOf(20, 3),
            parts: [toolCall("c2", "add", '{"a":3,"b":4}')],
          },
        },
        { response: { ...usageOf(30, 5), fullText: "3 and 7", parts: [text("3 and 7")] } },
      ],
      { tools },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "loop", input: go, sink });

    expect(turn.outcome).toEqual({
      kind: "finished",
      reason: "assistant_message",
      text: "3 and 7",
    });
    expect(turn.iterations).toBe(3);
    expect(turn.usage).toEqual({
      inputTokens: 60,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
    const usageEvents = sink.events.filter(
      (e): e is Extract<TurnEvent, { type: "usage" }> => e.type === "usage",
    );
    expect(usageEvents.map((e) => [e.iteration, e.usage.inputTokens, e.total.inputTokens])).toEqual(
      [
        [1, 10, 10],
        [2, 20, 30],
        [3, 30, 60],
      ],
    );
    expect(turn.toolCalls.map((c) => c.content)).toEqual(["3", "7"]);
    // The third call sees both rounds, each call followed by its result.
    expect(provider.requests[2]).toEqual([
      { role: "user", content: go },
      { role: "assistant", parts: [toolCall("c1", "add", '{"a":1,"b":2}')] },
      { role: "tool", callId: "c1", toolName: "add", content: "3", isError: false },
      { role: "assistant", parts: [toolCall("c2", "add", '{"a":3,"b":4}')] },
      { role: "tool", callId: "c2", toolName: "add", content: "7", isError: false },
    ]);
    expect(sink.types()).toEqual([
      "usage",
      "tool_call_proposed",
      "tool_call_dispatched",
      "tool_result",
      "usage",
      "tool_call_proposed",
      "tool_call_dispatched",
      "tool_result",
      "text_delta",
      "usage",
      "final_value",
      "terminal",
    ]);
  });

  it("stops at max iterations with every tool call answered", async () => {
    const tools = toolsOf({ again: () => Promise.resolve({ output: "ok" }) });
    const { engine, provider } = engineWith(
      (() => {
        const calls: ScriptedCall[] = [];
        for (let i = 1; i <= 5; i++) {
          calls.push({ response: { parts: [toolCall(`c${i}`, "again")] } });
        }
        return calls;
      })(),
      { tools, maxIterations: 2 },
    );
    const turn = await engine.runTurn({ turnId: "max", input: go });

    expect(turn.outcome).toEqual({ kind: "stopped", reason: "max_iterations", iterations: 2 });
    expect(provider.callCount).toBe(2);
    expect(turn.toolCalls.map((c) => c.callId)).toEqual(["c1", "c2"]);
    expect(unansweredToolCalls(turn.messages)).toEqual([]);
  });

  it("stops when the turn token cap is spent", async () => {
    const tools = toolsOf({ again: () => Promise.resolve({ output: "ok" }) });
    const { engine, provider } = engineWith(
      [
        { response: { ...usageOf(15, 5), parts: [toolCall("c1", "again")] } },
        { response: { ...usageOf(15, 5), parts: [toolCall("c2", "again")] } },
        { response: { ...usageOf(15, 5), parts: [toolCall("c3", "again")] } },
      ],
      { tools, maxTurnTokens: 30 },
    );
    const turn = await engine.runTurn({ turnId: "budget", input: go });

    expect(turn.outcome).toEqual({
      kind: "stopped",
      reason: "budget_exhausted",
      usedTokens: 40,
      budgetTokens: 30,
    });
    expect(provider.callCount).toBe(2);
    expect(turn.usage.inputTokens).toBe(30);
    // The call that reached the budget asked for c2: it never ran, and its result says why.
    expect(turn.toolCalls.map((c) => c.callId)).toEqual(["c1"]);
    expect(unansweredToolCalls(turn.messages)).toEqual([]);
    expect(turn.messages.at(-1)).toMatchObject({ role: "tool", callId: "c2", isError: true });
  });

  it("checks the budget after the only model call of a turn, keeping its answer", async () => {
    const { engine, provider } = engineWith(
      [
        {
          response: { ...usageOf(400, 60), fullText: "long answer", parts: [text("long answer")] },
        },
      ],
      { maxTurnTokens: 3 },
    );
    const turn = await engine.runTurn({ turnId: "one-call", input: go });

    expect(turn.outcome).toEqual({
      kind: "stopped",
      reason: "budget_exhausted",
      usedTokens: 460,
      budgetTokens: 3,
    });
    expect(provider.callCount).toBe(1);
    expect(turn.messages.at(-1)).toEqual({ role: "assistant", parts: [text("long answer")] });
  });

  it("finishes normally while the turn stays under its budget", async () => {
    const { engine } = engineWith(
      [{ response: { ...usageOf(10, 5), fullText: "short", parts: [text("short")] } }],
      { maxTurnTokens: 16 },
    );
    const turn = await engine.runTurn({ turnId: "under", input: go });
    expect(turn.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "short" });
  });

  it("answers an unknown tool with an error result and calls the model again", async () => {
    const { engine, provider } = engineWith(
      [
        { response: { parts: [toolCall("c1", "no_such_tool")] } },
        { response: { fullText: "sorry", parts: [text("sorry")] } },
      ],
      { tools: toolsOf({ known: () => Promise.resolve({ output: 1 }) }) },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "unknown", input: go, sink });

    expect(turn.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "sorry" });
    expect(provider.requests[1]?.at(-1)).toEqual({
      role: "tool",
      callId: "c1",
      toolName: "no_such_tool",
      content: '{"error":"unknown tool \\"no_such_tool\\"; available tools: known"}',
      isError: true,
    });
    expect(sink.types()).not.toContain("tool_call_dispatched");
  });

  it("answers malformed tool-call JSON with an error result, without running the tool", async () => {
    let ran = false;
    const tools = toolsOf({
      known: () => {
        ran = true;
        return Promise.resolve({ output: 1 });
      },
    });
    const { engine, provider } = engineWith(
      [
        { response: { parts: [toolCall("c1", "known", '{"a": 1')] } },
        { response: { fullText: "fixed", parts: [text("fixed")] } },
      ],
      { tools },
    );
    const turn = await engine.runTurn({ turnId: "malformed", input: go });

    expect(ran).toBe(false);
    expect(turn.outcome.kind).toBe("finished");
    expect(turn.toolCalls[0]?.status).toBe("error");
    const answer = provider.requests[1]?.at(-1);
    expect(answer?.role).toBe("tool");
    expect(answer?.role === "tool" && answer.isError).toBe(true);
    expect(
      answer?.role === "tool" &&
        answer.content.startsWith('{"error":"arguments are not valid JSON'),
    ).toBe(true);
  });

  it("answers a throwing tool with an error result", async () => {
    const tools = toolsOf({ broken: () => Promise.reject(new Error("disk full")) });
    const { engine, provider } = engineWith(
      [
        { response: { parts: [toolCall("c1", "broken")] } },
        { response: { fullText: "ok", parts: [text("ok")] } },
      ],
      { tools },
    );
    const turn = await engine.runTurn({ turnId: "throws", input: go });

    expect(turn.outcome.kind).toBe("finished");
    expect(provider.requests[1]?.at(-1)).toEqual({
      role: "tool",
      callId: "c1",
      toolName: "broken",
      content: '{"error":"disk full"}',
      isError: true,
    });
  });

  it("times out a slow tool, aborts its signal and continues", async () => {
    let aborted = false;
    const tools = toolsOf({
      stuck: (_call, context) =>
        new Promise(() => {
          context.signal.addEventListener("abort", () => {
            aborted = true;
          });
        }),
    });
    const { engine } = engineWith(
      [
        { response: { parts: [toolCall("c1", "stuck")] } },
        { response: { fullText: "moving on", parts: [text("moving on")] } },
      ],
      { tools, toolTimeoutMs: 50 },
    );
    const turn = await engine.runTurn({ turnId: "timeout", input: go });

    expect(aborted).toBe(true);
    expect(turn.toolCalls[0]?.status).toBe("timed_out");
    expect(turn.toolCalls[0]?.content).toBe('{"error":"timed out after 50 ms"}');
    expect(turn.outcome).toEqual({
      kind: "finished",
      reason: "assistant_message",
      text: "moving on",
    });
  });

  it("runs the tool calls of one response concurrently", async () => {
    // Each tool waits for the other to start: sequential execution would never finish.
    let releaseA: () => void = () => undefined;
    let releaseB: () => void = () => undefined;
    const aStarted = new Promise<void>((r) => (releaseA = r));
    const bStarted = new Promise<void>((r) => (releaseB = r));
    const tools = toolsOf({
      a: async () => {
        releaseA();
        await bStarted;
        return { output: "a" };
      },
      b: async () => {
        releaseB();
        await aStarted;
        return { output: "b" };
      },
    });
    const { engine } = engineWith(
      [
        { response: { parts: [toolCall("c1", "a"), toolCall("c2", "b")] } },
        { response: { fullText: "both", parts: [text("both")] } },
      ],
      { tools, toolTimeoutMs: 1000 },
    );
    const turn = await engine.runTurn({ turnId: "concurrent", input: go });

    expect(turn.toolCalls.map((c) => [c.callId, c.status, c.content])).toEqual([
      ["c1", "ok", "a"],
      ["c2", "ok", "b"],
    ]);
  });

  it("gives synthetic results only to the calls that had not finished when cancelled", async () => {
    const cancel = new AbortController();
    const tools = toolsOf({
      quick: () => Promise.resolve({ output: "quick done" }),
      slow: (_call, context) =>
        new Promise((_, reject) => {
          context.signal.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    });
    const { engine, provider } = engineWith(
      [{ response: { parts: [toolCall("c1", "quick"), toolCall("c2", "slow")] } }],
      { tools },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({
      turnId: "partial",
      input: go,
      signal: cancel.signal,
      // Cancelled the moment the quick call's result is out, while the slow one still runs.
      sink: {
        emit: (event) => {
          const recorded = sink.emit(event);
          if (event.type === "tool_result" && event.callId === "c1") cancel.abort();
          return recorded;
        },
      },
    });

    expect(turn.outcome).toEqual({ kind: "stopped", reason: "cancelled" });
    expect(provider.callCount).toBe(1);
    expect(turn.toolCalls.map((c) => [c.callId, c.status])).toEqual([
      ["c1", "ok"],
      ["c2", "cancelled"],
    ]);
    expect(unansweredToolCalls(turn.messages)).toEqual([]);
    expect(sink.types().filter((t) => t === "terminal")).toHaveLength(1);
  });

  it("keeps the streamed text when cancelled during a model call", async () => {
    const cancel = new AbortController();
    const { engine } = engineWith([
      { events: [{ type: "text_delta", text: "Partial ans" }], hang: true },
    ]);
    const sink = recordingSink();
    const turn = await engine.runTurn({
      turnId: "mid-call",
      input: go,
      signal: cancel.signal,
      // Cancelled once the call has streamed its text, while it hangs.
      sink: {
        emit: (event) => {
          const recorded = sink.emit(event);
          if (event.type === "text_delta") cancel.abort();
          return recorded;
        },
      },
    });

    expect(turn.outcome).toEqual({ kind: "stopped", reason: "cancelled" });
    expect(turn.messages.at(-1)).toEqual({ role: "assistant", parts: [text("Partial ans")] });
    expect(sink.types()).toEqual(["text_delta", "terminal"]);
  });

  it("stops before the first call when already cancelled", async () => {
    const cancel = new AbortController();
    cancel.abort();
    const { engine, provider } = engineWith([{ response: { fullText: "x", parts: [text("x")] } }]);
    const turn = await engine.runTurn({ turnId: "pre", input: go, signal: cancel.signal });

    expect(turn.outcome).toEqual({ kind: "stopped", reason: "cancelled" });
    expect(provider.callCount).toBe(0);
  });

  it("gives a tool-call id to calls that arrive without one", async () => {
    const tools = toolsOf({ t: () => Promise.resolve({ output: "r" }) });
    const { engine, provider } = engineWith(
      [
        { response: { parts: [toolCall("", "t"), toolCall("", "t")] } },
        { response: { fullText: "ok", parts: [text("ok")] } },
      ],
      { tools },
    );
    await engine.runTurn({ turnId: "ids", input: go });

    expect(provider.requests[1]?.slice(1)).toEqual([
      { role: "assistant", parts: [toolCall("call_1_1", "t"), toolCall("call_1_2", "t")] },
      { role: "tool", callId: "call_1_1", toolName: "t", content: "r", isError: false },
      { role: "tool", callId: "call_1_2", toolName: "t", content: "r", isError: false },
    ]);
  });
});

describe("asynchronous sinks", () => {
  it("sees every event in order, one at a time, when the sink awaits", async () => {
    const tools = toolsOf({
      fast: () => Promise.resolve({ output: "f" }),
      slow: () => sleep(10).then(() => ({ output: "s" })),
    });
    const { engine } = engineWith(
      [
        { response: { parts: [toolCall("c1", "slow"), toolCall("c2", "fast")] } },
        {
          events: [
            { type: "text_delta", text: "a" },
            { type: "text_delta", text: "b" },
          ],
          response: { fullText: "ab" },
        },
      ],
      { tools },
    );
    const seen: string[] = [];
    let inFlight = 0;
    let overlapped = false;
    const turn = await engine.runTurn({
      turnId: "async-sink",
      input: go,
      sink: {
        emit: async (event) => {
          inFlight++;
          if (inFlight > 1) overlapped = true;
          await sleep(1);
          seen.push(event.type === "tool_result" ? `tool_result:${event.callId}` : event.type);
          inFlight--;
        },
      },
    });

    expect(turn.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "ab" });
    expect(overlapped).toBe(false);
    expect(seen).toEqual([
      "usage",
      "tool_call_proposed",
      "tool_call_proposed",
      "tool_call_dispatched",
      "tool_call_dispatched",
      "tool_result:c2",
      "tool_result:c1",
      "text_delta",
      "text_delta",
      "usage",
      "final_value",
      "terminal",
    ]);
  });
});
