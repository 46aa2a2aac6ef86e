// Inline images as ADR 0100 promises them: up to 5 MiB, within the server's message limit
// (TETHER_MAX_MESSAGE_BYTES), through StreamTurn into a committed turn, on memory and on Redis.
// A refusal names the request field, never a field of what the store keeps.
import { randomUUID } from "node:crypto";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import type { SessionId } from "../../../src/domain/ids.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import type { InputPart } from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { storeLimitsFor, type RuntimeStore } from "../../../src/ports/runtime-store.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { decodeMessage } from "../../../src/runtime/turn/message-codec.js";
import { expectCode, violatedFields } from "../../support/api-clients.js";
import { startApiServer } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

const MiB = 1024 * 1024;

/** Bytes that are not all one value, so a shifted or truncated copy does not compare equal. */
function imageBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
  return bytes;
}

const input = (data: Uint8Array): InputPart[] =>
  [
    { kind: { case: "text", value: "what is in this picture?" } },
    {
      kind: {
        case: "image",
        value: { mimeType: "image/png", source: { case: "data", value: data } },
      },
    },
  ] as InputPart[];

interface Replica {
  turns: Client<typeof TurnService>;
  sessions: Client<typeof SessionService>;
  store: RuntimeStore;
  close(): Promise<void>;
}

for (const backend of ["memory", "redis"] as const) {
  describe(`inline images on ${backend}`, () => {
    let open: Replica | undefined;
    afterEach(async () => {
      await open?.close();
      open = undefined;
    });

    /** One replica whose message limit is `maxMessageBytes` (the server's default otherwise). */
    async function replica(maxMessageBytes?: number): Promise<Replica> {
      const { runtime, store } = createRuntimeHarness({
        provider: createEchoProvider(),
        ...(backend === "redis" ? { redis } : {}),
        // What the server's composition gives its store for that message limit.
        ...(maxMessageBytes !== undefined && { limits: storeLimitsFor(maxMessageBytes) }),
      });
      const server = await startApiServer({
        ...(maxMessageBytes !== undefined && {
          env: { TETHER_MAX_MESSAGE_BYTES: String(maxMessageBytes) },
        }),
        routes: (router) => {
          router.service(TurnService, createTurnService({ runtime }));
          router.service(SessionService, createSessionService({ store }));
        },
      });
      open = {
        turns: createClient(TurnService, server.transport),
        sessions: createClient(SessionService, server.transport),
        store,
        close: async () => {
          await runtime.drain(1_000);
          await server.close();
        },
      };
      return open;
    }

    /** Runs one turn on the input and returns how it ended. */
    async function runTurn(r: Replica, sessionId: string, parts: InputPart[]) {
      let completed: string | undefined;
      for await (const res of r.turns.streamTurn({ sessionId, input: parts })) {
        if (res.event?.event.case === "turnCompleted") {
          completed = res.event.event.value.outcome?.kind.case;
        }
      }
      return completed;
    }

    /** The image bytes of the session's first user message, as the store keeps them. */
    async function storedImage(r: Replica, sessionId: string): Promise<Uint8Array | undefined> {
      // Without auth every session belongs to the default tenant, whose prefix the store id carries.
      const snapshot = await r.store.loadSession(`default:${sessionId}` as SessionId);
      for (const raw of snapshot?.messages ?? []) {
        const message = decodeMessage(raw);
        if (message.role !== "user") continue;
        for (const item of message.content) {
          if (item.type === "image" && item.image.kind === "inline") return item.image.data;
        }
      }
      return undefined;
    }

    it("a 4 MB image within the default message limit is committed and read back equal", async () => {
      const r = await replica();
      const sessionId = `img-${randomUUID()}`;
      const image = imageBytes(4_000_000);

      expect(await runTurn(r, sessionId, input(image))).toBe("finished");

      const stored = await storedImage(r, sessionId);
      expect(stored?.byteLength).toBe(4_000_000);
      expect(Buffer.from(stored ?? []).equals(Buffer.from(image))).toBe(true);
      // The API's transcript shows the image by type and size.
      const { messages } = await r.sessions.listMessages({ sessionId });
      const user = messages.find((m) => m.role === TranscriptMessage_Role.USER);
      const ref = user?.parts.find((p) => p.kind.case === "image")?.kind.value;
      expect(ref).toMatchObject({ mimeType: "image/png", sizeBytes: 4_000_000n });
    });

    it("GetSession with include_messages on a 4 MB image's session is refused FAILED_PRECONDITION naming include_messages, pointing at ListMessages; never a transport failure", async () => {
      const r = await replica();
      const sessionId = `img-${randomUUID()}`;
      expect(await runTurn(r, sessionId, input(imageBytes(4_000_000)))).toBe("finished");

      const error = await expectCode(
        r.sessions.getSession({ sessionId, includeMessages: true }),
        Code.FailedPrecondition,
      );
      expect(violatedFields(error)).toEqual(["include_messages"]);
      expect(error.rawMessage).toContain("tether.v1.SessionService/ListMessages");
      expect(error.rawMessage).toContain("4194304");
      // A past revision is refused the same way; the session alone and the paged transcript read.
      const past = await expectCode(
        r.sessions.getSession({ sessionId, includeMessages: true, atRevision: 2n }),
        Code.FailedPrecondition,
      );
      expect(violatedFields(past)).toEqual(["include_messages"]);
      const { session } = await r.sessions.getSession({ sessionId });
      expect(session?.headRevision).toBe(2n);
      const { messages } = await r.sessions.listMessages({ sessionId });
      expect(messages.map((m) => m.role)).toEqual([
        TranscriptMessage_Role.USER,
        TranscriptMessage_Role.ASSISTANT,
      ]);
    });

    it("with a message limit above 5 MiB: a 5 MiB image is committed, one byte more is refused naming input[1].image.data", async () => {
      const r = await replica(8 * MiB);
      const sessionId = `img-${randomUUID()}`;

      const largest = imageBytes(5 * MiB);
      expect(await runTurn(r, sessionId, input(largest))).toBe("finished");
      const stored = await storedImage(r, sessionId);
      expect(Buffer.from(stored ?? []).equals(Buffer.from(largest))).toBe(true);

      const error = await expectCode(
        runTurn(r, `img-${randomUUID()}`, input(imageBytes(5 * MiB + 1))),
        Code.InvalidArgument,
      );
      expect(violatedFields(error)).toEqual(["input[1].image.data"]);
    });
  });
}
