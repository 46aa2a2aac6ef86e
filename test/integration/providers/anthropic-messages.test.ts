// The Messages adapter against a loopback server speaking the streaming wire format.
import { afterEach, describe, expect, it } from "vitest";
import { createAnthropicMessagesProvider } from "../../../src/providers/anthropic-messages.js";
import { drain, failure, request } from "./model-calls.js";
import { sse, startWireServer, type WireReply, type WireServer } from "./wire-server.js";

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function providerFor(replies: WireReply[]) {
  server = await startWireServer(replies);
  return createAnthropicMessagesProvider({
    apiKey: "test-key",
    baseURL: server.baseURL,
    defaultModel: "test-model",
  });
}

const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);

const messageStart = ev({
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "test-model-20260101",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: {
      input_tokens: 100,
      cache_creation_input_tokens: 30,
      cache_read_input_tokens: 50,
      output_tokens: 1,
    },
  },
});
const messageEnd = (stop: string) => [
  ev({
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 42 },
  }),
  ev({ type: "message_stop" }),
];

const startUsage = {
  inputTokens: 100,
  outputTokens: 1,
  cacheReadTokens: 50,
  cacheWriteTokens: 30,
  reasoningTokens: 0,
};
const finalUsage = { ...startUsage, outputTokens: 42 };

describe("anthropic messages adapter", () => {
  it("streams plain text with cache-token usage", async () => {
    const provider = await providerFor([
      {
        frames: [
          messageStart,
          ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
          ev({ type: "ping" }),
          ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } }),
          ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo!" } }),
          ev({ type: "content_block_stop", index: 0 }),
          ...messageEnd("end_turn"),
        ],
      },
    ]);
    const { events, response } = await drain(
      provider.call(
        request({
          messages: [
            { role: "system", text: "be brief" },
            { role: "user", content: [{ type: "text", text: "hello" }] },
          ],
          options: { temperature: 0.5 },
        }),
      ),
    );

    expect(events).toEqual([
      { type: "usage", usage: startUsage },
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo!" },
      { type: "usage", usage: finalUsage },
    ]);
    // The model as message_start names it (a snapshot of the alias sent).
    expect(response).toEqual({
      fullText: "Hello!",
      parts: [{ type: "text", text: "Hello!" }],
      usage: finalUsage,
      model: "test-model-20260101",
    });
    const sent = server?.requests[0];
    expect(sent?.path).toBe("/v1/messages");
    // The pinned SDK sends the key as a bearer token; older releases used x-api-key.
    const key = sent?.headers["x-api-key"] ?? sent?.headers.authorization?.replace(/^Bearer /, "");
    expect(key).toBe("test-key");
    expect(sent?.body).toEqual({
      model: "test-model",
      max_tokens: 4096,
      system: "be brief",
      messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
      temperature: 0.5,
      stream: true,
    });
  });

  it("assembles several tool uses from JSON fragments", async () => {
    const provider = await providerFor([
      {
        frames: [
          messageStart,
          ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
          ev({
            type: "content_block_delta",
            index: 0,
            delta: { type: "text_delta", text: "Checking." },
          }),
          ev({ type: "content_block_stop", index: 0 }),
          ev({
            type: "content_block_start",
            index: 1,
            content_block: { type: "tool_use", id: "toolu_a", name: "get_weather", input: {} },
          }),
          ev({
            type: "content_block_delta",
            index: 1,
            delta: { type: "input_json_delta", partial_json: '{"city":' },
          }),
          ev({
            type: "content_block_delta",
            index: 1,
            delta: { type: "input_json_delta", partial_json: ' "Paris"}' },
          }),
          ev({ type: "content_block_stop", index: 1 }),
          ev({
            type: "content_block_start",
            index: 2,
            content_block: { type: "tool_use", id: "toolu_b", name: "get_time", input: {} },
          }),
          ev({
            type: "content_block_delta",
            index: 2,
            delta: { type: "input_json_delta", partial_json: '{"tz":"CET"}' },
          }),
          ev({ type: "content_block_stop", index: 2 }),
          ...messageEnd("tool_use"),
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

    const a = {
      type: "tool_call",
      callId: "toolu_a",
      toolName: "get_weather",
      argumentsJson: '{"city": "Paris"}',
    };
    const b = {
      type: "tool_call",
      callId: "toolu_b",
      toolName: "get_time",
      argumentsJson: '{"tz":"CET"}',
    };
    expect(events.filter((e) => e.type === "part")).toEqual([
      { type: "part", part: a },
      { type: "part", part: b },
    ]);
    expect(response.parts).toEqual([{ type: "text", text: "Checking." }, a, b]);
    expect((server?.requests[0]?.body as { tools: unknown }).tools).toEqual([
      { name: "get_weather", description: "weather", input_schema: { type: "object" } },
      { name: "get_time", description: "time", input_schema: { type: "object" } },
    ]);
  });

  it("sends tool results as user content, merged with input that follows", async () => {
    const provider = await providerFor([{ frames: [messageStart, ...messageEnd("end_turn")] }]);
    await drain(
      provider.call(
        request({
          messages: [
            { role: "user", content: [{ type: "text", text: "weather?" }] },
            {
              role: "assistant",
              parts: [
                { type: "reasoning", text: "thinking" },
                {
                  type: "tool_call",
                  callId: "toolu_a",
                  toolName: "get_weather",
                  argumentsJson: '{"city":"Paris"}',
                },
              ],
            },
            {
              role: "tool",
              callId: "toolu_a",
              toolName: "get_weather",
              content: "sunny",
              isError: false,
            },
            { role: "user", content: [{ type: "text", text: "and tomorrow?" }] },
            {
              role: "user",
              content: [
                {
                  type: "image",
                  image: {
                    kind: "inline",
                    mediaType: "image/jpeg",
                    data: new Uint8Array([1, 2, 3]),
                  },
                },
              ],
            },
          ],
        }),
      ),
    );

    expect((server?.requests[0]?.body as { messages: unknown }).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather?" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_a", content: "sunny" },
          { type: "text", text: "and tomorrow?" },
          { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "AQID" } },
        ],
      },
    ]);
  });

  it("classifies a 400 as terminal", async () => {
    const provider = await providerFor([
      {
        status: 400,
        json: {
          type: "error",
          error: { type: "invalid_request_error", message: "max_tokens too large" },
        },
      },
    ]);
    const { error } = await failure(provider.call(request()));

    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("max_tokens too large");
  });

  it("classifies a 429 as retryable and reads retry-after", async () => {
    const provider = await providerFor([
      {
        status: 429,
        headers: { "retry-after": "3" },
        json: { type: "error", error: { type: "rate_limit_error", message: "rate limited" } },
      },
    ]);
    const { error } = await failure(provider.call(request()));

    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(3000);
  });

  it("classifies a 529 overload as retryable", async () => {
    const provider = await providerFor([
      {
        status: 529,
        json: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      },
    ]);
    const { error } = await failure(provider.call(request()));

    expect(error.status).toBe(529);
    expect(error.retryable).toBe(true);
  });

  it("fails on an error event inside the stream", async () => {
    const provider = await providerFor([
      {
        frames: [
          messageStart,
          sse(
            { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
            "error",
          ),
        ],
      },
    ]);
    const { error, events } = await failure(provider.call(request()));

    expect(events).toEqual([{ type: "usage", usage: startUsage }]);
    expect(error.message).toContain("Overloaded");
  });

  it("reports a disconnect mid-stream as a transport failure after the text it got", async () => {
    const provider = await providerFor([
      {
        frames: [
          messageStart,
          ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
          ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Par" } }),
          ev({
            type: "content_block_delta",
            index: 0,
            delta: { type: "text_delta", text: "tial" },
          }),
        ],
        cutAfter: 3,
      },
    ]);
    const { error, events } = await failure(provider.call(request()));

    expect(events).toEqual([
      { type: "usage", usage: startUsage },
      { type: "text_delta", text: "Par" },
    ]);
    expect(error.status).toBeUndefined();
    expect(error.retryable).toBe(true);
  });

  it("asks for structured output with the turn's response format", async () => {
    const provider = await providerFor([
      {
        frames: [
          messageStart,
          ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
          ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "{}" } }),
          ev({ type: "content_block_stop", index: 0 }),
          ...messageEnd("end_turn"),
        ],
      },
    ]);
    const schema = { type: "object", properties: { city: { type: "string" } } };
    await drain(provider.call(request({ options: { responseFormat: { name: "place", schema } } })));
    expect((server?.requests[0]?.body as { output_config: unknown }).output_config).toEqual({
      format: { type: "json_schema", schema },
    });
  });
});
