// The Messages adapter against stream shapes a real deployment meets, streamed byte for byte by a
// loopback server: a body that ends before message_stop, an answer cut at max_tokens, thinking.
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
    apiKey: "k",
    baseURL: server.baseURL,
    defaultModel: "m",
  });
}

const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const start = ev({
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "m",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  },
});
const textBlock = (text: string) => [
  ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
  ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
  ev({ type: "content_block_stop", index: 0 }),
];
const end = (stop: string) => [
  ev({
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 9 },
  }),
  ev({ type: "message_stop" }),
];

describe("Anthropic streams at their edges", () => {
  it("a body that ends cleanly before message_stop is an early end, never an answer", async () => {
    const provider = await providerFor([{ frames: [start, ...textBlock("half")] }]);
    const { error } = await failure(provider.call(request()));
    expect(error.message).toContain("stream ended early");
    expect(error.retryable).toBe(true);
  });

  it("stop_reason max_tokens marks the response truncated", async () => {
    const provider = await providerFor([
      { frames: [start, ...textBlock("cut"), ...end("max_tokens")] },
    ]);
    const { response } = await drain(provider.call(request()));
    expect(response.truncated).toBe(true);
    expect(response.fullText).toBe("cut");
  });

  it("a complete message is not truncated", async () => {
    const provider = await providerFor([
      { frames: [start, ...textBlock("done"), ...end("end_turn")] },
    ]);
    const { response } = await drain(provider.call(request()));
    expect(response.truncated).toBeUndefined();
  });

  it("thinking deltas stream as reasoning deltas and are kept as a reasoning part", async () => {
    const provider = await providerFor([
      {
        frames: [
          start,
          ev({
            type: "content_block_start",
            index: 0,
            content_block: { type: "thinking", thinking: "", signature: "" },
          }),
          ev({
            type: "content_block_delta",
            index: 0,
            delta: { type: "thinking_delta", thinking: "step one" },
          }),
          ev({ type: "content_block_stop", index: 0 }),
          ev({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
          ev({
            type: "content_block_delta",
            index: 1,
            delta: { type: "text_delta", text: "answer" },
          }),
          ev({ type: "content_block_stop", index: 1 }),
          ...end("end_turn"),
        ],
      },
    ]);
    const { events, response } = await drain(provider.call(request()));
    expect(events).toContainEqual({ type: "reasoning_delta", text: "step one" });
    expect(response.parts).toEqual([
      { type: "reasoning", text: "step one" },
      { type: "text", text: "answer" },
    ]);
  });
});
