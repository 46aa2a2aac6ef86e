// The scripted provider and the echo model that is the embedded default.
import { describe, expect, it } from "vitest";
import { createTurnEngine } from "../../../src/engine/index.js";
import { ProviderError, type ModelCall } from "../../../src/ports/model-provider.js";
import { systemSleep } from "../../../src/ports/sleep.js";
import { createEchoProvider, createScriptedProvider } from "../../../src/providers/scripted.js";

const request = (signal = new AbortController().signal) => ({
  messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "ping" }] }],
  tools: [],
  options: {},
  signal,
});

async function drain(call: ModelCall): Promise<{ events: unknown[]; response: unknown }> {
  const events: unknown[] = [];
  for (;;) {
    const step = await call.next();
    if (step.done === true) return { events, response: step.value };
    events.push(step.value);
  }
}

describe("scripted provider", () => {
  it("plays its entries in order and fails once the script is exhausted", async () => {
    const provider = createScriptedProvider({
      script: [{ events: [{ type: "text_delta", text: "one" }], response: { fullText: "one" } }],
    });
    expect(await drain(provider.call(request()))).toEqual({
      events: [{ type: "text_delta", text: "one" }],
      response: { fullText: "one", parts: [] },
    });
    await expect(drain(provider.call(request()))).rejects.toBeInstanceOf(ProviderError);
    expect(provider.callCount).toBe(2);
  });

  it("stops streaming when its signal aborts", async () => {
    const cancel = new AbortController();
    const provider = createScriptedProvider({
      script: [
        {
          events: [
            { type: "text_delta", text: "a" },
            { type: "text_delta", text: "b" },
          ],
        },
      ],
    });
    const call = provider.call(request(cancel.signal));
    expect(await call.next()).toEqual({ done: false, value: { type: "text_delta", text: "a" } });
    cancel.abort();
    await expect(call.next()).rejects.toThrow("model call aborted");
  });
});

describe("echo model", () => {
  it("answers with the user's text, streamed in deltas", async () => {
    const engine = createTurnEngine({
      provider: createEchoProvider({ chunkSize: 4 }),
      sleep: systemSleep,
    });
    const deltas: string[] = [];
    const turn = await engine.runTurn({
      turnId: "echo",
      input: [{ type: "text", text: "hello, tether" }],
      sink: {
        emit: (e) => {
          if (e.type === "text_delta") deltas.push(e.text);
        },
      },
    });

    expect(deltas).toEqual(["hell", "o, t", "ethe", "r"]);
    expect(turn.outcome).toEqual({
      kind: "finished",
      reason: "assistant_message",
      text: "hello, tether",
    });
    expect(turn.usage.inputTokens).toBe(13);
    expect(turn.usage.outputTokens).toBe(13);
  });
});
