// Committed messages as clients read them: each stored role as one typed TranscriptMessage
// (written here as its protojson), a worker's own entry shown as its JSON, and the pages of
// whole revisions.
import { toJson } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import { messagePage, transcriptMessage } from "../../../../src/api/convert/transcript.js";
import { TranscriptMessageSchema } from "../../../../src/gen/tether/v1/transcript_pb.js";

const asJson = (stored: string) => toJson(TranscriptMessageSchema, transcriptMessage(stored));

describe("transcriptMessage", () => {
  test("a system message is one text part with its turn and revision", () => {
    expect(asJson('{"role":"system","text":"be brief","turnId":"t1","revision":1}')).toEqual({
      role: "ROLE_SYSTEM",
      parts: [{ text: "be brief" }],
      turnId: "t1",
      revision: "1",
    });
  });

  test("a user message keeps its text, an image's URL, and an inline image's type and size", () => {
    const stored = JSON.stringify({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", image: { kind: "url", url: "https://example.com/cat.png" } },
        {
          type: "image",
          image: { kind: "inline", mediaType: "image/png", data: { $bytes: "AAECAw==" } },
        },
      ],
      turnId: "t1",
      revision: 2,
    });
    expect(asJson(stored)).toEqual({
      role: "ROLE_USER",
      parts: [
        { text: "look" },
        { image: { url: "https://example.com/cat.png" } },
        { image: { mimeType: "image/png", sizeBytes: "4" } },
      ],
      turnId: "t1",
      revision: "2",
    });
  });

  test("an assistant message keeps its reasoning, text and tool calls in order", () => {
    const stored = JSON.stringify({
      role: "assistant",
      parts: [
        { type: "reasoning", text: "think" },
        { type: "text", text: "calling" },
        { type: "tool_call", callId: "c1", toolName: "lookup", argumentsJson: '{"q":1}' },
      ],
      turnId: "t2",
      revision: 3,
    });
    expect(asJson(stored)).toEqual({
      role: "ROLE_ASSISTANT",
      parts: [
        { reasoning: "think" },
        { text: "calling" },
        { toolCall: { callId: "c1", name: "lookup", argumentsJson: '{"q":1}' } },
      ],
      turnId: "t2",
      revision: "3",
    });
  });

  test("a tool message is one result part", () => {
    const stored = JSON.stringify({
      role: "tool",
      callId: "c1",
      toolName: "lookup",
      content: "not found",
      isError: true,
      turnId: "t2",
      revision: 3,
    });
    expect(asJson(stored)).toEqual({
      role: "ROLE_TOOL",
      parts: [{ toolResult: { callId: "c1", name: "lookup", output: "not found", isError: true } }],
      turnId: "t2",
      revision: "3",
    });
  });

  test("an entry of a worker's own shape is shown as its JSON, with no role", () => {
    const stored = '{"kind":"custom","value":7,"turnId":"w1","revision":4}';
    expect(asJson(stored)).toEqual({
      parts: [{ text: stored }],
      turnId: "w1",
      revision: "4",
    });
    expect(transcriptMessage('{"role":"robot"}').role).toBe(0);
  });

  test("a message committed without a mark has no turn and revision 0", () => {
    const message = transcriptMessage('{"role":"system","text":"old"}');
    expect(message.turnId).toBe("");
    expect(message.revision).toBe(0n);
  });
});

describe("messagePage", () => {
  const at = (revision: number, text: string) =>
    JSON.stringify({ role: "system", text, turnId: `t${revision}`, revision });
  // Revision 1 holds two messages, 2 one, 3 three.
  const stored = [at(1, "1a"), at(1, "1b"), at(2, "2a"), at(3, "3a"), at(3, "3b"), at(3, "3c")];
  const texts = (page: ReturnType<typeof messagePage>) =>
    page.messages.map((m) => (m.parts[0]?.kind.case === "text" ? m.parts[0].kind.value : "?"));

  test("pages hold whole revisions, about `limit` messages, and say where to go on", () => {
    const first = messagePage(stored, 0, 2);
    expect(texts(first)).toEqual(["1a", "1b"]);
    expect(first.nextAfterRevision).toBe(1);
    const second = messagePage(stored, 1, 2);
    expect(texts(second)).toEqual(["2a"]);
    expect(second.nextAfterRevision).toBe(2);
  });

  test("a revision larger than the limit comes whole; the last page says 0", () => {
    const last = messagePage(stored, 2, 2);
    expect(texts(last)).toEqual(["3a", "3b", "3c"]);
    expect(last.nextAfterRevision).toBe(0);
    expect(messagePage(stored, 3, 2)).toEqual({ messages: [], nextAfterRevision: 0 });
  });

  test("everything fits in one page when the limit allows", () => {
    const all = messagePage(stored, 0, 100);
    expect(texts(all)).toEqual(["1a", "1b", "2a", "3a", "3b", "3c"]);
    expect(all.nextAfterRevision).toBe(0);
  });

  test("messages without a revision are shown only from the start", () => {
    const unmarked = ['{"role":"system","text":"old"}', at(1, "1a")];
    expect(texts(messagePage(unmarked, 0, 10))).toEqual(["old", "1a"]);
    expect(texts(messagePage(unmarked, 1, 10))).toEqual([]);
  });
});
