// The scripted-tools model: echo by default, a "/tool" command asks for an offered tool, and the
// tool's result comes back as the answer. Also its name in TETHER_PROVIDER.
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/domain/conversation.js";
import type { ModelCall } from "../../../src/ports/model-provider.js";
import { createToolDemoProvider } from "../../../src/providers/demo-tools.js";
import { loadConfig } from "../../../src/server/config.js";

const lookup = { name: "lookup", description: "looks up", inputSchema: { type: "object" } };

function call(messages: Message[], tools = [lookup]): ModelCall {
  return createToolDemoProvider({ chunkSize: 4 }).call({
    messages,
    tools,
    options: {},
    signal: new AbortController().signal,
  });
}

async function drain(c: ModelCall): Promise<{ events: unknown[]; response: unknown }> {
  const events: unknown[] = [];
  for (;;) {
    const step = await c.next();
    if (step.done === true) return { events, response: step.value };
    events.push(step.value);
  }
}

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

describe("scripted-tools model", () => {
  it("echoes plain text in deltas, like the echo model", async () => {
    const { events, response } = await drain(call([user("hello!")]));
    expect(events).toEqual([
      { type: "text_delta", text: "hell" },
      { type: "text_delta", text: "o!" },
    ]);
    expect(response).toMatchObject({
      fullText: "hello!",
      parts: [{ type: "text", text: "hello!" }],
    });
  });

  it("asks for the named tool with the given arguments", async () => {
    const { events, response } = await drain(call([user('/tool lookup {"key":"k1"}')]));
    expect(events).toEqual([]);
    expect(response).toMatchObject({
      fullText: "",
      parts: [
        { type: "tool_call", callId: "call-1", toolName: "lookup", argumentsJson: '{"key":"k1"}' },
      ],
    });
  });

  it("numbers call ids after the calls already in the conversation", async () => {
    const earlier: Message[] = [
      user("/tool lookup {}"),
      {
        role: "assistant",
        parts: [{ type: "tool_call", callId: "call-1", toolName: "lookup", argumentsJson: "{}" }],
      },
      { role: "tool", callId: "call-1", toolName: "lookup", content: "v", isError: false },
      { role: "assistant", parts: [{ type: "text", text: "lookup returned v" }] },
      user("/tool lookup"),
    ];
    const { response } = await drain(call(earlier));
    expect(response).toMatchObject({
      parts: [{ type: "tool_call", callId: "call-2", argumentsJson: "{}" }],
    });
  });

  it("answers with the tool's result once it is in", async () => {
    const { response } = await drain(
      call([
        user("/tool lookup {}"),
        {
          role: "assistant",
          parts: [{ type: "tool_call", callId: "call-1", toolName: "lookup", argumentsJson: "{}" }],
        },
        {
          role: "tool",
          callId: "call-1",
          toolName: "lookup",
          content: "forty-two",
          isError: false,
        },
      ]),
    );
    expect(response).toMatchObject({ fullText: "lookup returned forty-two" });
  });

  it("says so instead of calling a tool that is not offered or arguments that are not JSON", async () => {
    expect((await drain(call([user("/tool missing {}")]))).response).toMatchObject({
      fullText: "no tool named missing is offered",
    });
    expect((await drain(call([user("/tool lookup {nope")]))).response).toMatchObject({
      fullText: "the arguments of lookup are not JSON",
    });
  });

  it("is selected by TETHER_PROVIDER=scripted-tools; the default stays the echo model", () => {
    expect(loadConfig({ TETHER_PROVIDER: "scripted-tools" }).provider).toEqual({
      kind: "scripted-tools",
    });
    expect(loadConfig({}).provider).toEqual({ kind: "echo" });
  });
});
