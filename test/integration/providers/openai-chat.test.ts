// The Chat Completions adapter against a loopback server speaking the streaming wire format.
import { afterEach, describe, expect, it } from "vitest";
import { createTurnEngine } from "../../../src/engine/index.js";
import { ProviderError } from "../../../src/ports/model-provider.js";
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
  return createOpenAIChatProvider({
    apiKey: "test-key",
    baseURL: server.baseURL,
    defaultModel: "test-model",
  });
}

const chunk = (delta: unknown, finish: string | null = null) =>
  sse({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "test-model-0613",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

const usageChunk = sse({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "test-model",
  choices: [],
  usage: {
    prompt_tokens: 20,
    completion_tokens: 7,
    total_tokens: 27,
    prompt_tokens_details: { cached_tokens: 5 },
    completion_tokens_details: { reasoning_tokens: 2 },
  },
});

const textStream: WireReply = {
  frames: [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "Hel" }),
    chunk({ content: "lo!" }),
    chunk({}, "stop"),
    usageChunk,
    sse("[DONE]"),
  ],
};

describe("openai chat completions adapter", () => {
  it("streams plain text and reports the usage chunk", async () => {
    const provider = await providerFor([textStream]);
    const { events, response } = await drain(
      provider.call(request({ options: { temperature: 0.2, maxOutputTokens: 64 } })),
    );

    const usage = {
      inputTokens: 15,
      outputTokens: 7,
      cacheReadTokens: 5,
      cacheWriteTokens: 0,
      reasoningTokens: 2,
    };
    expect(events).toEqual([
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo!" },
      { type: "usage", usage },
    ]);
    // The model as the reply names it (a snapshot of the alias sent), for gen_ai.response.model.
    expect(response).toEqual({
      fullText: "Hello!",
      parts: [{ type: "text", text: "Hello!" }],
      usage,
      model: "test-model-0613",
    });
    const sent = server?.requests[0];
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe("Bearer test-key");
    expect(sent?.body).toEqual({
      model: "test-model",
      messages: [{ role: "user", content: "hello" }],
      temperature: 0.2,
      max_completion_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("assembles several tool calls from interleaved argument fragments", async () => {
    const provider = await providerFor([
      {
        frames: [
          chunk({
            role: "assistant",
            tool_calls: [
              {
                index: 0,
                id: "call_a",
                type: "function",
                function: { name: "get_weather", arguments: "" },
              },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
          chunk({
            tool_calls: [
              {
                index: 1,
                id: "call_b",
                type: "function",
                function: { name: "get_time", arguments: "" },
              },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: '{"tz":"CET"}' } }] }),
          chunk({}, "tool_calls"),
          sse("[DONE]"),
        ],
      },
    ]);
    const { events, response } = await drain(
      provider.call(
        request({
          tools: [
            { name: "get_weather", description: "weather", inputSchema: { type: "object" } },
            { name: "get_time", description: "time", inputSchema: { type: "object" } },
          ],
        }),
      ),
    );

    const calls = [
      {
        type: "tool_call",
        callId: "call_a",
        toolName: "get_weather",
        argumentsJson: '{"city":"Paris"}',
      },
      { type: "tool_call", callId: "call_b", toolName: "get_time", argumentsJson: '{"tz":"CET"}' },
    ];
    expect(events).toEqual(calls.map((part) => ({ type: "part", part })));
    expect(response).toEqual({ fullText: "", parts: calls, model: "test-model-0613" });
    expect((server?.requests[0]?.body as { tools: unknown }).tools).toEqual([
      {
        type: "function",
        function: { name: "get_weather", description: "weather", parameters: { type: "object" } },
      },
      {
        type: "function",
        function: { name: "get_time", description: "time", parameters: { type: "object" } },
      },
    ]);
  });

  it("classifies a 400 as terminal", async () => {
    const provider = await providerFor([
      {
        status: 400,
        json: {
          error: { message: "bad request: messages is empty", type: "invalid_request_error" },
        },
      },
    ]);
    const { error } = await failure(provider.call(request()));

    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("messages is empty");
  });

  it("classifies a 429 as retryable and reads retry-after", async () => {
    const provider = await providerFor([
      {
        status: 429,
        headers: { "retry-after": "2" },
        json: { error: { message: "rate limited", type: "rate_limit_error" } },
      },
    ]);
    const { error } = await failure(provider.call(request()));

    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(2000);
  });

  it("classifies a 503 as retryable", async () => {
    const provider = await providerFor([{ status: 503, json: { error: { message: "down" } } }]);
    const { error } = await failure(provider.call(request()));

    expect(error.status).toBe(503);
    expect(error.retryable).toBe(true);
  });

  it("reports a disconnect mid-stream as a transport failure after the text it got", async () => {
    const provider = await providerFor([
      { frames: [chunk({ content: "Par" }), chunk({ content: "tial" }), usageChunk], cutAfter: 2 },
    ]);
    const { error, events } = await failure(provider.call(request()));

    expect(events).toEqual([
      { type: "text_delta", text: "Par" },
      { type: "text_delta", text: "tial" },
    ]);
    expect(error.status).toBeUndefined();
    expect(error.retryable).toBe(true);
  });

  it("stops a held stream when the call is aborted", async () => {
    const provider = await providerFor([{ frames: [chunk({ content: "wait" })], hold: true }]);
    const cancel = new AbortController();
    const call = provider.call(request({ signal: cancel.signal }));
    expect(await call.next()).toEqual({ done: false, value: { type: "text_delta", text: "wait" } });
    cancel.abort();
    await expect(call.next()).rejects.toBeInstanceOf(ProviderError);
  });

  it("runs a tool loop through the engine, retrying a 429 it was told to wait for", async () => {
    const provider = await providerFor([
      {
        status: 429,
        headers: { "retry-after-ms": "40" },
        json: { error: { message: "slow down" } },
      },
      {
        frames: [
          chunk({
            tool_calls: [
              {
                index: 0,
                id: "call_1",
                type: "function",
                function: { name: "lookup", arguments: '{"q":"x"}' },
              },
            ],
          }),
          chunk({}, "tool_calls"),
          sse("[DONE]"),
        ],
      },
      textStream,
    ]);
    const waits: number[] = [];
    const engine = createTurnEngine({
      provider,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
      systemPrompt: "be brief",
      toolTimeoutMs: 0,
      tools: {
        definitions: () => [
          { name: "lookup", description: "find", inputSchema: { type: "object" } },
        ],
        execute: () => Promise.resolve({ output: { found: true } }),
      },
    });
    const turn = await engine.runTurn({
      turnId: "wire",
      input: [{ type: "text", text: "find x" }],
    });

    expect(turn.outcome).toEqual({ kind: "finished", reason: "assistant_message", text: "Hello!" });
    expect(waits).toEqual([40]);
    expect(turn.usage.inputTokens).toBe(15);
    expect((server?.requests[2]?.body as { messages: unknown }).messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "find x" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"found":true}' },
    ]);
  });

  it("sends inline images as data URLs", async () => {
    const provider = await providerFor([textStream]);
    await drain(
      provider.call(
        request({
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "what is it?" },
                {
                  type: "image",
                  image: {
                    kind: "inline",
                    mediaType: "image/png",
                    data: new Uint8Array([1, 2, 3]),
                  },
                },
                { type: "image", image: { kind: "url", url: "https://example.test/a.jpg" } },
              ],
            },
          ],
        }),
      ),
    );
    expect((server?.requests[0]?.body as { messages: unknown }).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what is it?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AQID" } },
          { type: "image_url", image_url: { url: "https://example.test/a.jpg" } },
        ],
      },
    ]);
  });

  it("asks for structured output with the turn's response format", async () => {
    const provider = await providerFor([textStream]);
    const schema = { type: "object", properties: { city: { type: "string" } } };
    await drain(provider.call(request({ options: { responseFormat: { name: "place", schema } } })));
    expect((server?.requests[0]?.body as { response_format: unknown }).response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "place", schema },
    });
  });
});
