// A server tool in the loop of the real model adapters: the OpenAI and Anthropic adapters against
// loopback servers replaying recorded streams, the engine running the MCP tool the model asked
// for on the everything server (stdio). The first request offers the tool with the server's
// schema; the second carries its result in the vendor's format.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTurnEngine } from "../../../src/engine/index.js";
import { createMcpHub, type McpHub } from "../../../src/mcp/hub.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { systemSleep } from "../../../src/ports/sleep.js";
import { createAnthropicMessagesProvider } from "../../../src/providers/anthropic-messages.js";
import { createOpenAIChatProvider } from "../../../src/providers/openai-chat.js";
import { everythingStdio, quietMcpLogger } from "../../support/mcp-servers.js";
import { waitFor } from "../../support/wait-for.js";
import { sse, startWireServer, type WireReply, type WireServer } from "../providers/wire-server.js";

let hub: McpHub;
beforeAll(async () => {
  hub = createMcpHub({
    servers: [everythingStdio()],
    callTimeoutMs: 10_000,
    logger: quietMcpLogger,
  });
  await waitFor(() => hub.states()[0]?.state === "connected", { what: "everything connected" });
}, 30_000);
afterAll(() => hub.close());

async function turnThrough(provider: ModelProvider) {
  const tools = hub.forTurn(["everything__echo"], (id) => `s/t/${id}`).executor;
  const engine = createTurnEngine({
    provider,
    tools,
    sleep: systemSleep,
    toolTimeoutMs: 10_000,
  });
  return engine.runTurn({ turnId: "t", input: [{ type: "text", text: "echo wire" }] });
}

const openaiChunk = (delta: unknown, finish: string | null = null) =>
  sse({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const anthropicStart = ev({
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
const anthropicEnd = (stop: string) => [
  ev({
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 5 },
  }),
  ev({ type: "message_stop" }),
];

describe("an MCP tool in the real adapters' loop", () => {
  let server: WireServer | undefined;
  afterAll(() => server?.close());

  it("OpenAI chat completions: the tool is offered, called, and its result sent back", async () => {
    const replies: WireReply[] = [
      {
        frames: [
          openaiChunk({
            role: "assistant",
            tool_calls: [
              {
                index: 0,
                id: "call_1",
                type: "function",
                function: { name: "everything__echo", arguments: '{"message":"wire"}' },
              },
            ],
          }),
          openaiChunk({}, "tool_calls"),
          sse("[DONE]"),
        ],
      },
      { frames: [openaiChunk({ content: "done" }), openaiChunk({}, "stop"), sse("[DONE]")] },
    ];
    server = await startWireServer(replies, "/v1");
    const turn = await turnThrough(
      createOpenAIChatProvider({ apiKey: "k", baseURL: server.baseURL, defaultModel: "m" }),
    );
    expect(turn.outcome).toMatchObject({ kind: "finished", text: "done" });
    const first = server.requests[0]?.body as {
      tools: { function: { name: string; parameters: unknown } }[];
    };
    expect(first.tools.map((t) => t.function.name)).toEqual(["everything__echo"]);
    expect(first.tools[0]?.function.parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
    });
    const second = server.requests[1]?.body as { messages: unknown[] };
    expect(second.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "Echo: wire",
    });
    await server.close();
    server = undefined;
  });

  it("Anthropic messages: the tool is offered, called, and its result sent back", async () => {
    const replies: WireReply[] = [
      {
        frames: [
          anthropicStart,
          ev({
            type: "content_block_start",
            index: 0,
            content_block: { type: "tool_use", id: "toolu_1", name: "everything__echo", input: {} },
          }),
          ev({
            type: "content_block_delta",
            index: 0,
            delta: { type: "input_json_delta", partial_json: '{"message":"wire"}' },
          }),
          ev({ type: "content_block_stop", index: 0 }),
          ...anthropicEnd("tool_use"),
        ],
      },
      {
        frames: [
          anthropicStart,
          ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
          ev({
            type: "content_block_delta",
            index: 0,
            delta: { type: "text_delta", text: "done" },
          }),
          ev({ type: "content_block_stop", index: 0 }),
          ...anthropicEnd("end_turn"),
        ],
      },
    ];
    server = await startWireServer(replies);
    const turn = await turnThrough(
      createAnthropicMessagesProvider({ apiKey: "k", baseURL: server.baseURL, defaultModel: "m" }),
    );
    expect(turn.outcome).toMatchObject({ kind: "finished", text: "done" });
    const first = server.requests[0]?.body as { tools: { name: string; input_schema: unknown }[] };
    expect(first.tools.map((t) => t.name)).toEqual(["everything__echo"]);
    expect(first.tools[0]?.input_schema).toMatchObject({
      properties: { message: { type: "string" } },
    });
    const second = server.requests[1]?.body as { messages: { role: string; content: unknown }[] };
    expect(second.messages.at(-1)).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "Echo: wire" }],
    });
  });
});
