// Checkpoints admit steers and queued work between tool results and the next model call, and
// before completion; inputs carry text and images within limits.
import { describe, expect, it } from "vitest";
import { isTetherError } from "../../../src/domain/errors.js";
import type { InputItem } from "../../../src/domain/conversation.js";
import type {
  CheckpointAdmission,
  CheckpointRequest,
  TurnCheckpointHost,
} from "../../../src/ports/checkpoint-host.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { createTurnEngine } from "../../../src/engine/index.js";
import { systemSleep } from "../../../src/ports/sleep.js";
import { engineWith, recordingSink, text, toolCall, toolsOf } from "./helpers.js";

const go: InputItem[] = [{ type: "text", text: "go" }];

function scriptedHost(
  answers: Partial<Record<string, CheckpointAdmission[]>>,
): TurnCheckpointHost & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    checkpoint: (request: CheckpointRequest) => {
      const key = `${request.checkpoint}@${request.iteration}`;
      seen.push(key);
      return Promise.resolve(answers[key] ?? []);
    },
  };
}

describe("checkpoints", () => {
  it("appends admitted steers and work after tool results, before the next model call", async () => {
    const host = scriptedHost({
      "after_work@1": [
        { source: { kind: "steer", id: "in-1" }, items: [{ type: "text", text: "also check B" }] },
        {
          source: { kind: "queued_work", id: "batch-7" },
          items: [{ type: "text", text: "process woke" }],
        },
      ],
    });
    const { engine, provider } = engineWith(
      [
        { response: { parts: [toolCall("c1", "look")] } },
        { response: { fullText: "A and B", parts: [text("A and B")] } },
      ],
      { tools: toolsOf({ look: () => Promise.resolve({ output: "A" }) }), checkpoints: host },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "steer", input: go, sink });

    expect(turn.outcome).toEqual({
      kind: "finished",
      reason: "assistant_message",
      text: "A and B",
    });
    expect(host.seen).toEqual(["after_work@1", "before_completion@2"]);
    expect(provider.requests[1]?.slice(2)).toEqual([
      { role: "tool", callId: "c1", toolName: "look", content: "A", isError: false },
      // A steer's message names its input; queued work's carries none.
      { role: "user", content: [{ type: "text", text: "also check B" }], inputIds: ["in-1"] },
      { role: "user", content: [{ type: "text", text: "process woke" }] },
    ]);
    expect(sink.events.find((e) => e.type === "checkpoint_admission")).toEqual({
      type: "checkpoint_admission",
      checkpoint: "after_work",
      sources: [
        { kind: "steer", id: "in-1" },
        { kind: "queued_work", id: "batch-7" },
      ],
    });
  });

  it("continues with another model call when input arrives before completion", async () => {
    const host = scriptedHost({
      "before_completion@1": [
        { source: { kind: "steer", id: "in-2" }, items: [{ type: "text", text: "in French" }] },
      ],
    });
    const { engine, provider } = engineWith(
      [
        { response: { fullText: "Hello", parts: [text("Hello")] } },
        { response: { fullText: "Bonjour", parts: [text("Bonjour")] } },
      ],
      { checkpoints: host },
    );
    const sink = recordingSink();
    const turn = await engine.runTurn({ turnId: "late-steer", input: go, sink });

    expect(turn.outcome).toEqual({
      kind: "finished",
      reason: "assistant_message",
      text: "Bonjour",
    });
    expect(turn.assistantText).toBe("Bonjour");
    expect(host.seen).toEqual(["before_completion@1", "before_completion@2"]);
    expect(provider.requests[1]).toEqual([
      { role: "user", content: go },
      { role: "assistant", parts: [text("Hello")] },
      { role: "user", content: [{ type: "text", text: "in French" }], inputIds: ["in-2"] },
    ]);
    expect(sink.events.filter((e) => e.type === "final_value")).toEqual([
      { type: "final_value", text: "Bonjour" },
    ]);
  });

  it("is not consulted after a tool control ends the turn", async () => {
    const host = scriptedHost({});
    const { engine } = engineWith([{ response: { parts: [toolCall("c1", "done")] } }], {
      tools: toolsOf({
        done: () => Promise.resolve({ output: 1, control: { type: "finish", value: 42 } }),
      }),
      checkpoints: host,
    });
    const turn = await engine.runTurn({ turnId: "finish", input: go });

    expect(turn.outcome.reason).toBe("tool_value");
    expect(host.seen).toEqual([]);
  });
});

describe("inputs", () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);

  it("passes images to providers that accept them", async () => {
    const { engine, provider } = engineWith([
      { response: { fullText: "a cat", parts: [text("a cat")] } },
    ]);
    const input: InputItem[] = [
      { type: "text", text: "what is this?" },
      { type: "image", image: { kind: "inline", mediaType: "image/png", data: png } },
      { type: "image", image: { kind: "url", url: "https://example.test/cat.jpg" } },
    ];
    await engine.runTurn({ turnId: "img", input });

    expect(provider.requests[0]).toEqual([{ role: "user", content: input }]);
  });

  it("replaces images with a note for providers that do not accept them", async () => {
    const provider = createScriptedProvider({
      acceptsImages: false,
      script: [{ response: { fullText: "?", parts: [text("?")] } }],
    });
    const engine = createTurnEngine({ provider, sleep: systemSleep });
    const input: InputItem[] = [
      { type: "text", text: "what is this?" },
      { type: "image", image: { kind: "url", url: "https://example.test/cat.jpg" } },
    ];
    const turn = await engine.runTurn({ turnId: "no-img", input });

    expect(provider.requests[0]).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "text", text: "[image omitted: this model does not accept images]" },
        ],
      },
    ]);
    // The stored turn keeps the image itself.
    expect(turn.messages[0]).toEqual({ role: "user", content: input });
  });

  it("rejects an inline image over the size limit before the turn starts", async () => {
    const { engine, provider } = engineWith([], {
      inputLimits: { maxInlineImageBytes: 3, maxItems: 8 },
    });
    const sink = recordingSink();
    const attempt = engine.runTurn({
      turnId: "big",
      input: [{ type: "image", image: { kind: "inline", mediaType: "image/png", data: png } }],
      sink,
    });

    await expect(attempt).rejects.toSatisfy(
      (err) =>
        isTetherError(err, "invalid_argument") &&
        err.violations.length === 1 &&
        err.violations[0]?.field === "items[0].image.data" &&
        err.violations[0].description === "inline image is 4 bytes; the limit is 3",
    );
    expect(sink.events).toEqual([]);
    expect(provider.callCount).toBe(0);
  });

  it("rejects empty input and non-http image URLs", async () => {
    const { engine } = engineWith([]);
    await expect(engine.runTurn({ turnId: "empty", input: [] })).rejects.toSatisfy(
      (err) => isTetherError(err, "invalid_argument") && err.violations[0]?.field === "items",
    );
    await expect(
      engine.runTurn({
        turnId: "file-url",
        input: [{ type: "image", image: { kind: "url", url: "file:///etc/passwd" } }],
      }),
    ).rejects.toSatisfy(
      (err) =>
        isTetherError(err, "invalid_argument") && err.violations[0]?.field === "items[0].image.url",
    );
  });

  it("continues a committed history", async () => {
    const { engine, provider } = engineWith([{ response: { fullText: "4", parts: [text("4")] } }]);
    const history = [
      { role: "user" as const, content: [{ type: "text" as const, text: "2+2?" }] },
      { role: "assistant" as const, parts: [text("Let me think.")] },
    ];
    const turn = await engine.runTurn({
      turnId: "history",
      history,
      input: [{ type: "text", text: "answer" }],
    });

    expect(provider.requests[0]).toHaveLength(3);
    expect(turn.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "answer" }] },
      { role: "assistant", parts: [text("4")] },
    ]);
  });
});
