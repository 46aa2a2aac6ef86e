// The Chat Completions adapter against the shapes OpenAI-compatible servers send in the wild
// (vLLM, Groq, DeepInfra, Fireworks, OpenRouter, LiteLLM), streamed byte for byte by a loopback
// server: usage chunks without choices, error chunks, clean early ends, repeated names, parallel
// calls on one index, truncation, reasoning, and retries.
import { afterEach, describe, expect, it } from "vitest";
import { createTurnEngine } from "../../../src/engine/index.js";
import type { TurnEvent } from "../../../src/domain/turn-events.js";
import { createOpenAIChatProvider } from "../../../src/providers/openai-chat.js";
import { drain, failure, request } from "./model-calls.js";
import { sse, startWireServer, type WireReply, type WireServer } from "./wire-server.js";

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function providerFor(replies: WireReply[]) {
  server = await startWireServer(replies, "/v1");
  return createOpenAIChatProvider({ apiKey: "k", baseURL: server.baseURL, defaultModel: "m" });
}

const base = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
const chunk = (delta: unknown, finish: string | null = null) =>
  sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ({
  index,
  ...(id === undefined ? {} : { id, type: "function" }),
  function: { ...(name === undefined ? {} : { name }), arguments: args },
});

describe("OpenAI-compatible servers in the wild", () => {
  it("a final usage chunk with choices null, or without choices, ends the call normally", async () => {
    for (const usageChunk of [sse({ ...base, choices: null, usage }), sse({ ...base, usage })]) {
      const provider = await providerFor([
        { frames: [chunk({ content: "hi" }), chunk({}, "stop"), usageChunk, sse("[DONE]")] },
      ]);
      const { response } = await drain(provider.call(request()));
      expect(response.fullText).toBe("hi");
      expect(response.usage?.inputTokens).toBe(3);
      await server?.close();
      server = undefined;
    }
  });

  it("a vLLM error chunk fails the call with the server's message", async () => {
    const provider = await providerFor([
      {
        frames: [
          chunk({ content: "par" }),
          sse({
            object: "error",
            message: "CUDA out of memory",
            type: "InternalServerError",
            code: 500,
          }),
        ],
      },
    ]);
    const { error } = await failure(provider.call(request()));
    expect(error.message).toBe("openai: CUDA out of memory");
    expect(error.status).toBe(500);
  });

  it("a body that ends cleanly without a finish reason or [DONE] is an early end, never an answer", async () => {
    const provider = await providerFor([{ frames: [chunk({ content: "half an ans" })] }]);
    const { error } = await failure(provider.call(request()));
    expect(error.message).toContain("stream ended early");
    expect(error.retryable).toBe(true);
  });

  it("through the engine: an early end before any text is retried, after text it fails the turn", async () => {
    const provider = await providerFor([
      { frames: [chunk({ role: "assistant" })] },
      { frames: [chunk({ content: "whole" }), chunk({}, "stop"), sse("[DONE]")] },
      { frames: [chunk({ content: "cut" })] },
    ]);
    const events: TurnEvent[] = [];
    const engine = createTurnEngine({ provider, sleep: () => Promise.resolve() });
    const sink = { emit: (e: TurnEvent) => void events.push(e) };
    const first = await engine.runTurn({
      turnId: "t1",
      input: [{ type: "text", text: "go" }],
      sink,
    });
    expect(first.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "whole" });
    expect(events.filter((e) => e.type === "provider_retry")).toHaveLength(1);

    const second = await engine.runTurn({ turnId: "t2", input: [{ type: "text", text: "go" }] });
    expect(second.outcome).toMatchObject({ kind: "failed", reason: "provider_error" });
    if (second.outcome.kind === "failed") {
      expect(second.outcome.message).toContain("stream ended early");
    }
  });

  it("a name repeated on every chunk is not concatenated", async () => {
    const provider = await providerFor([
      {
        frames: [
          chunk({ tool_calls: [call(0, "call_a", "lookup", '{"q":')] }),
          chunk({ tool_calls: [call(0, undefined, "lookup", '"x"}')] }),
          chunk({ tool_calls: [call(0, undefined, "lookup", "")] }),
          chunk({}, "tool_calls"),
          sse("[DONE]"),
        ],
      },
    ]);
    const { response } = await drain(provider.call(request()));
    expect(response.parts).toEqual([
      { type: "tool_call", callId: "call_a", toolName: "lookup", argumentsJson: '{"q":"x"}' },
    ]);
  });

  it("parallel calls that all say index 0 but carry distinct ids stay distinct", async () => {
    const provider = await providerFor([
      {
        frames: [
          chunk({ tool_calls: [call(0, "call_1", "add", '{"a":1}')] }),
          chunk({ tool_calls: [call(0, "call_2", "mul", '{"b":')] }),
          chunk({ tool_calls: [call(0, undefined, undefined, "2}")] }),
          chunk({}, "tool_calls"),
          sse("[DONE]"),
        ],
      },
    ]);
    const { response } = await drain(provider.call(request()));
    expect(response.parts).toEqual([
      { type: "tool_call", callId: "call_1", toolName: "add", argumentsJson: '{"a":1}' },
      { type: "tool_call", callId: "call_2", toolName: "mul", argumentsJson: '{"b":2}' },
    ]);
  });

  it("finish_reason length: the answer is reported truncated; a cut tool call is never run", async () => {
    const provider = await providerFor([
      { frames: [chunk({ content: "a long ans" }), chunk({}, "length"), sse("[DONE]")] },
      {
        frames: [
          chunk({ tool_calls: [call(0, "call_1", "lookup", '{"q":"unfini')] }),
          chunk({}, "length"),
          sse("[DONE]"),
        ],
      },
    ]);
    const ran: string[] = [];
    const events: TurnEvent[] = [];
    const engine = createTurnEngine({
      provider,
      sleep: () => Promise.resolve(),
      toolTimeoutMs: 0,
      tools: {
        definitions: () => [{ name: "lookup", description: "", inputSchema: { type: "object" } }],
        execute: (c) => {
          ran.push(c.callId);
          return Promise.resolve({ output: "ran" });
        },
      },
    });
    const sink = { emit: (e: TurnEvent) => void events.push(e) };
    const text = await engine.runTurn({ turnId: "t1", input: [{ type: "text", text: "x" }], sink });
    expect(text.outcome).toEqual({
      kind: "finished",
      reason: "assistant_message",
      text: "a long ans",
      truncated: true,
    });
    expect(events).toContainEqual({ type: "output_truncated", iteration: 1 });

    const tool = await engine.runTurn({ turnId: "t2", input: [{ type: "text", text: "x" }] });
    expect(tool.outcome).toEqual({
      kind: "stopped",
      reason: "output_truncated",
      toolName: "lookup",
      callId: "call_1",
    });
    expect(ran).toEqual([]);
    expect(tool.messages.at(-1)).toMatchObject({ role: "tool", callId: "call_1", isError: true });
  });

  it("reasoning_content and reasoning stream as reasoning deltas and are kept as a reasoning part", async () => {
    const provider = await providerFor([
      {
        frames: [
          chunk({ reasoning_content: "think " }),
          chunk({ reasoning: "more" }),
          chunk({ content: "answer" }),
          chunk({}, "stop"),
          sse("[DONE]"),
        ],
      },
    ]);
    const { events, response } = await drain(provider.call(request()));
    expect(events.filter((e) => e.type === "reasoning_delta")).toEqual([
      { type: "reasoning_delta", text: "think " },
      { type: "reasoning_delta", text: "more" },
    ]);
    expect(response.parts[0]).toEqual({ type: "reasoning", text: "think more" });
  });

  it("a retry is an event with attempt, delay and cause; a Retry-After over the cap says so", async () => {
    const provider = await providerFor([
      { status: 503, json: { error: { message: "overloaded" } } },
      { frames: [chunk({ content: "ok" }), chunk({}, "stop"), sse("[DONE]")] },
      { status: 429, headers: { "retry-after": "120" }, json: { error: { message: "quota" } } },
    ]);
    const events: TurnEvent[] = [];
    const engine = createTurnEngine({ provider, sleep: () => Promise.resolve(), random: () => 0 });
    const sink = { emit: (e: TurnEvent) => void events.push(e) };
    await engine.runTurn({ turnId: "t1", input: [{ type: "text", text: "x" }], sink });
    const retry = events.find((e) => e.type === "provider_retry");
    expect(retry).toMatchObject({ type: "provider_retry", iteration: 1, attempt: 1, status: 503 });
    expect(retry && "reason" in retry ? retry.reason : "").toContain("overloaded");

    const capped = await engine.runTurn({ turnId: "t2", input: [{ type: "text", text: "x" }] });
    expect(capped.outcome).toMatchObject({ kind: "failed", reason: "provider_error", status: 429 });
    if (capped.outcome.kind === "failed") {
      expect(capped.outcome.message).toContain("asked to wait 120 s");
      expect(capped.outcome.message).toContain("the 60 s a turn waits");
    }
  });
});
