// Items named alike on the stream and in the lists (ADR 0037, "Items and turns"): a turn's events,
// folded by the translator, and the same turn's committed transcript, listed as items, give the
// same item ids in the same order; a listed user message carries the text and image it had.
import { describe, expect, it } from "vitest";
import { initialTranslatorState, translateLog } from "../../../src/agents-api/event-translator.js";
import { transcriptItems } from "../../../src/agents-api/transcript-items.js";
import type { Message } from "../../../src/domain/conversation.js";
import type { CursoredEvent, SessionEvent } from "../../../src/domain/session-events.js";
import { ZERO_USAGE } from "../../../src/domain/usage.js";

const SCALE = 2 ** 20;
const TURN = "turn-abc";

function log(events: SessionEvent[]): CursoredEvent[] {
  return events.map((event, i) => ({
    cursor: (i + 1) * SCALE,
    sessionId: "s1",
    turnId: TURN,
    event,
  }));
}

/** Item ids in the order the stream first shows them (item.added, or item.done of a new one). */
function streamedIds(events: SessionEvent[]): string[] {
  const ids: string[] = [];
  for (const e of translateLog(initialTranslatorState("s1"), log(events)).events) {
    if (!e.type.startsWith("agent.session.turn.item.")) continue;
    const id = String((e.item as { id: string }).id);
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

const requested = (callId: string, toolName: string): SessionEvent => ({
  type: "tool_call_requested",
  callId,
  toolName,
  argumentsJson: '{"city":"Oslo"}',
  deadlineMs: 1,
  idempotencyKey: "k",
});

describe("a turn's events and its listed items", () => {
  it("give the same ids: user inputs, assistant messages, a client call and its output, a server call, a steer", () => {
    const events: SessionEvent[] = [
      { type: "turn_started", inputIds: ["in1"], turnIndex: 1 },
      { type: "text_delta", text: "Let me look." },
      requested("call_1", "get_weather"),
      { type: "tool_call_finished", callId: "call_1", output: "sunny", isError: false },
      {
        type: "tool_call_started",
        callId: "call_2",
        toolName: "wipe",
        argumentsJson: "{}",
        idempotencyKey: "k2",
        origin: { kind: "mcp", server: "ops" },
      },
      { type: "tool_call_finished", callId: "call_2", output: "done", isError: false },
      { type: "input_admitted", inputIds: ["in2"] },
      { type: "text_delta", text: "Sunny, " },
      { type: "text_delta", text: "and wiped." },
      {
        type: "turn_completed",
        outcome: { kind: "finished", reason: "assistant_message", text: "Sunny, and wiped." },
        headRevision: 2,
        usage: ZERO_USAGE,
      },
    ];
    const transcript: Message[] = [
      { role: "user", content: [{ type: "text", text: "weather?" }], inputIds: ["in1"] },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Let me look." },
          {
            type: "tool_call",
            callId: "call_1",
            toolName: "get_weather",
            argumentsJson: '{"city":"Oslo"}',
            client: true,
          },
        ],
      },
      { role: "tool", callId: "call_1", toolName: "get_weather", content: "sunny", isError: false },
      {
        role: "assistant",
        parts: [{ type: "tool_call", callId: "call_2", toolName: "wipe", argumentsJson: "{}" }],
      },
      { role: "tool", callId: "call_2", toolName: "wipe", content: "done", isError: false },
      { role: "user", content: [{ type: "text", text: "and wipe" }], inputIds: ["in2"] },
      { role: "assistant", parts: [{ type: "text", text: "Sunny, and wiped." }] },
    ];
    const listed = transcriptItems(
      transcript.map((message) => ({ message, turnId: TURN })),
      () => false,
    ).map((i) => i.id);
    const expected = [
      "msg_in1",
      `msg_${TURN}_0`,
      "fc_call_1",
      "fco_call_1",
      "mcp_call_2",
      "msg_in2",
      `msg_${TURN}_1`,
    ];
    expect(streamedIds(events)).toEqual(expected);
    expect(listed).toEqual(expected);
  });

  it("a listed user message carries its text and image; the stream's has none", () => {
    const [user] = transcriptItems(
      [
        {
          turnId: TURN,
          message: {
            role: "user",
            inputIds: ["in1"],
            content: [
              { type: "text", text: "what is this?" },
              { type: "image", image: { kind: "url", url: "https://example.com/a.png" } },
              {
                type: "image",
                image: { kind: "inline", mediaType: "image/png", data: new Uint8Array([1, 2]) },
              },
            ],
          },
        },
      ],
      () => false,
    );
    expect(user?.item).toEqual({
      id: "msg_in1",
      type: "message",
      turn_id: TURN,
      role: "user",
      content: [
        { type: "input_text", text: "what is this?" },
        { type: "input_image", image_url: "https://example.com/a.png" },
        { type: "input_image", image_url: "data:image/png;base64,AQI=" },
      ],
      phase: null,
      status: "completed",
    });
  });

  it("a call committed before calls were marked is the client's when the session's agent names its tool", () => {
    const items = transcriptItems(
      [
        {
          turnId: TURN,
          message: {
            role: "assistant",
            parts: [{ type: "tool_call", callId: "c1", toolName: "lookup", argumentsJson: "{}" }],
          },
        },
        {
          turnId: TURN,
          message: { role: "tool", callId: "c1", toolName: "lookup", content: "x", isError: true },
        },
      ],
      (name) => name === "lookup",
    );
    expect(items.map((i) => [i.id, i.item.status])).toEqual([
      ["fc_c1", "failed"],
      ["fco_c1", "failed"],
    ]);
  });
});
