// The typed transcript: GetSession and ListMessages return committed messages in one shape for
// every role, each with the turn and revision that committed it; pages hold whole revisions.
import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { afterEach, expect, it } from "vitest";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";

let server: ApiServerHarness | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it("GetSession and ListMessages give the typed transcript with turns and revisions", async () => {
  const provider = createScriptedProvider({
    script: [
      {
        events: [{ type: "reasoning_delta", text: "think" }],
        response: {
          parts: [
            { type: "reasoning", text: "think" },
            { type: "tool_call", callId: "c1", toolName: "lookup", argumentsJson: '{"q":1}' },
          ],
        },
      },
      { events: [{ type: "text_delta", text: "found it" }], response: {} },
      { events: [{ type: "text_delta", text: "second" }], response: {} },
    ],
  });
  const { runtime, store } = createRuntimeHarness({
    provider,
    serverTools: {
      definitions: () => [{ name: "lookup", description: "", inputSchema: { type: "object" } }],
      execute: () => Promise.resolve({ output: "42" }),
    },
  });
  server = await startApiServer({
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(SessionService, createSessionService({ store }));
    },
  });
  const turns = createClient(TurnService, server.transport);
  const sessions = createClient(SessionService, server.transport);
  const sessionId = `t-${randomUUID()}`;
  const turnIds: string[] = [];
  for (const text of ["first", "again"]) {
    for await (const r of turns.streamTurn({
      sessionId,
      input: [{ kind: { case: "text", value: text } }],
    })) {
      if (r.event?.event.case === "turnCompleted") turnIds.push(r.event.turnId);
    }
  }

  const got = await sessions.getSession({ sessionId, includeMessages: true });
  const shape = got.transcript.map((m) => [
    Role[m.role],
    m.parts.map((p) => p.kind.case),
    m.turnId,
    Number(m.revision),
  ]);
  expect(shape).toEqual([
    ["USER", ["text"], turnIds[0], 2],
    ["ASSISTANT", ["reasoning", "toolCall"], turnIds[0], 2],
    ["TOOL", ["toolResult"], turnIds[0], 2],
    ["ASSISTANT", ["text"], turnIds[0], 2],
    ["USER", ["text"], turnIds[1], 3],
    ["ASSISTANT", ["text"], turnIds[1], 3],
  ]);
  expect(got.transcript[1]?.parts[1]?.kind).toEqual({
    case: "toolCall",
    value: expect.objectContaining({ callId: "c1", name: "lookup", argumentsJson: '{"q":1}' }),
  });
  expect(got.transcript[2]?.parts[0]?.kind).toEqual({
    case: "toolResult",
    value: expect.objectContaining({ callId: "c1", output: "42", isError: false }),
  });
  // The JSON strings stay for one release, beside the typed form.
  expect(got.messages).toHaveLength(6);

  // Pages hold whole revisions: revision 2 alone is more than 2 messages, so it is a page.
  const first = await sessions.listMessages({ sessionId, pageSize: 2 });
  expect(first.messages.map((m) => Number(m.revision))).toEqual([2, 2, 2, 2]);
  expect(first.nextAfterRevision).toBe(2n);
  const second = await sessions.listMessages({ sessionId, afterRevision: 2n, pageSize: 2 });
  expect(second.messages.map((m) => Role[m.role])).toEqual(["USER", "ASSISTANT"]);
  expect(second.nextAfterRevision).toBe(0n);
  expect((await sessions.listMessages({ sessionId, afterRevision: 3n })).messages).toEqual([]);

  // The same pages by the opaque token every List RPC hands out.
  expect(first.nextPageToken).toBe("eyJhZnRlciI6IjIifQ");
  const byToken = await sessions.listMessages({
    sessionId,
    pageToken: first.nextPageToken,
    pageSize: 2,
  });
  expect(byToken.messages).toEqual(second.messages);
  expect(byToken.nextPageToken).toBe("");
  for (const [request, field] of [
    [{ pageToken: "eyJhZnRlciI6ImEifQ" }, "page_token"],
    [{ pageToken: first.nextPageToken, afterRevision: 1n }, "page_token"],
  ] as const) {
    const refusal = await sessions.listMessages({ sessionId, ...request }).then(
      () => undefined,
      (error: unknown) => ConnectError.from(error),
    );
    expect(refusal?.code).toBe(Code.InvalidArgument);
    expect(refusal?.message).toContain(field);
  }
});

it("turn_completed carries the messages its commit added when the stream asks for them", async () => {
  const provider = createScriptedProvider({
    script: (request) => ({
      events: [{ type: "text_delta", text: `reply ${request.messages.length}` }],
      response: {},
    }),
  });
  const { runtime, store } = createRuntimeHarness({ provider });
  server = await startApiServer({
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(SessionService, createSessionService({ store }));
    },
  });
  const turns = createClient(TurnService, server.transport);
  const sessionId = `t-${randomUUID()}`;
  const completions = [];
  for (const [text, include] of [
    ["first", true],
    ["second", false],
  ] as const) {
    for await (const r of turns.streamTurn({
      sessionId,
      input: [{ kind: { case: "text", value: text } }],
      includeCommittedMessages: include,
    })) {
      if (r.event?.event.case === "turnCompleted") completions.push(r.event);
    }
  }
  const shape = (messages: { role: Role; revision: bigint; turnId: string }[]) =>
    messages.map((m) => [Role[m.role], Number(m.revision), m.turnId]);
  const [first, second] = completions;
  expect(first?.event.case === "turnCompleted" && shape(first.event.value.messages)).toEqual([
    ["USER", 2, first?.turnId],
    ["ASSISTANT", 2, first?.turnId],
  ]);
  // Not asked for: none.
  expect(second?.event.case === "turnCompleted" && second.event.value.messages).toEqual([]);
  // A watcher asks for them for every turn it sees.
  const watched = [];
  for await (const r of turns.watchSession({
    sessionId,
    afterCursor: 0n,
    untilTurnCompleted: false,
    includeCommittedMessages: true,
  })) {
    if (r.event?.event.case === "turnCompleted") watched.push(shape(r.event.event.value.messages));
    if (watched.length === 2) break;
  }
  expect(watched[1]).toEqual([
    ["USER", 3, second?.turnId],
    ["ASSISTANT", 3, second?.turnId],
  ]);
});
