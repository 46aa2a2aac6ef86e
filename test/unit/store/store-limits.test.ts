// The store's limits follow from the server's request limits: whatever a StreamTurn request within
// TETHER_MAX_MESSAGE_BYTES carries, once the edge accepted it, fits the store as the runtime
// encodes it (the pending input's payload, the committed user message), so the store never
// refuses it naming a field the client never sent.
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import { clientToolsFromProto, inputFromProto } from "../../../src/api/convert/turn.js";
import type { InputPartSchema } from "../../../src/gen/tether/v1/turn_pb.js";
import { StreamTurnRequestSchema } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { storeLimitsFor } from "../../../src/ports/runtime-store.js";
import { encodeCommitted } from "../../../src/runtime/turn/message-codec.js";
import { encodeInputPayload } from "../../../src/runtime/turn/input-payload.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const MESSAGE_LIMITS = [KiB, 64 * KiB, MiB, 4 * MiB, 8 * MiB];

type Part = MessageInitShape<typeof InputPartSchema>;
type Tool = { name: string; description: string; parametersJsonSchema: string };

/** The request's size on the wire, and what the store is given for it. */
function stored(parts: Part[], clientTools: Tool[] = []) {
  const request = create(StreamTurnRequestSchema, { sessionId: "s", input: parts, clientTools });
  const items = inputFromProto(request.input);
  const payload = encodeInputPayload({
    items,
    clientTools: clientToolsFromProto(request.clientTools),
    settings: {},
  });
  const message = encodeCommitted(
    { role: "user", content: items },
    { turnId: `turn-${"f".repeat(24)}`, revision: Number.MAX_SAFE_INTEGER },
  );
  return {
    requestBytes: toBinary(StreamTurnRequestSchema, request).byteLength,
    storedBytes: Math.max(Buffer.byteLength(payload), Buffer.byteLength(message)),
  };
}

const image = (bytes: number): Part => ({
  kind: {
    case: "image",
    value: { mimeType: "image/png", source: { case: "data", value: new Uint8Array(bytes) } },
  },
});
const text = (value: string): Part => ({ kind: { case: "text", value } });

describe.each(MESSAGE_LIMITS)("a message limit of %i bytes", (limit) => {
  const { maxPayloadBytes } = storeLimitsFor(limit);

  test("the largest image that fits the request (at most 5 MiB) fits the store", () => {
    const size = Math.min(5 * MiB, limit - 64);
    const { requestBytes, storedBytes } = stored([text("look"), image(size)]);
    expect(requestBytes).toBeLessThanOrEqual(limit);
    expect(storedBytes).toBeLessThanOrEqual(maxPayloadBytes);
  });

  test("text that JSON escapes the most (control characters) fits the store", () => {
    const { requestBytes, storedBytes } = stored([text("\u0001".repeat(limit - 16))]);
    expect(requestBytes).toBeLessThanOrEqual(limit);
    expect(storedBytes).toBeLessThanOrEqual(maxPayloadBytes);
  });

  test("the most items and client tools, each as small as it can be, fit the store", () => {
    const items = Array.from({ length: 64 }, () => text(""));
    const tools = Array.from({ length: 128 }, (_, i) => ({
      name: `t${i}`,
      description: "",
      parametersJsonSchema: "",
    }));
    const { storedBytes } = stored(items, tools);
    expect(storedBytes).toBeLessThanOrEqual(maxPayloadBytes);
  });

  test("the store still takes what the runtime writes of its own: a 1 MiB value", () => {
    expect(maxPayloadBytes).toBeGreaterThanOrEqual(MiB);
  });
});

test("whatever the message limit, the store takes a 5 MiB image as the input limits promise", () => {
  const { storedBytes } = stored([text("look"), image(5 * MiB)]);
  for (const limit of MESSAGE_LIMITS) {
    expect(storedBytes).toBeLessThanOrEqual(storeLimitsFor(limit).maxPayloadBytes);
  }
});
