// TurnService end to end: through the in-memory router transport and the real server (gRPC over
// h2c), plus a @grpc/grpc-js client generated from proto/ by a second toolchain.
import { Code, createClient, createRouterTransport, type Transport } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHealthState } from "../../../src/api/health-service.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { BusyStrategy, StopReason, type TurnEvent } from "../../../src/gen/tether/v1/turn_pb.js";
import { ZERO_USAGE } from "../../../src/domain/usage.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { createTetherInterceptors, createTetherRoutes } from "../../../src/server/routes.js";
import { TurnService as TurnServiceDesc } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { expectCode } from "../../support/api-clients.js";

interface Target {
  transport: Transport;
  port?: number;
  close(): Promise<void>;
}

/** Echoes the input in 3-character deltas, except for inputs that ask for a client tool or to hang. */
function testProvider(): ModelProvider {
  return createScriptedProvider({
    script: (request) => {
      const last = request.messages.at(-1);
      const text =
        last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "";
      if (text === "use the tool") {
        return {
          response: {
            parts: [
              {
                type: "tool_call",
                callId: "call-1",
                toolName: "client_lookup",
                argumentsJson: '{"k":1}',
              },
            ],
          },
        };
      }
      if (text === "spend tokens") {
        const usage = { ...ZERO_USAGE, inputTokens: 400, outputTokens: 60 };
        return { events: [{ type: "text_delta", text }], response: { fullText: text, usage } };
      }
      if (text === "hang") return { events: [{ type: "text_delta", text: "working" }], hang: true };
      if (last?.role === "tool") {
        return {
          events: [{ type: "text_delta", text: `tool said ${last.content}` }],
          response: {},
        };
      }
      const chunks: { type: "text_delta"; text: string }[] = [];
      for (let i = 0; i < text.length; i += 3)
        chunks.push({ type: "text_delta", text: text.slice(i, i + 3) });
      return { events: chunks, response: { fullText: text } };
    },
  });
}

function turnRoutes() {
  const { runtime } = createRuntimeHarness({
    provider: testProvider(),
    clientToolTimeoutMs: 5_000,
  });
  return (router: Parameters<NonNullable<Parameters<typeof createTetherRoutes>[0]["routes"]>>[0]) =>
    router.service(TurnServiceDesc, createTurnService({ runtime }));
}

async function routerTarget(): Promise<Target> {
  const { createMemoryStore } = await import("../../../src/store/memory/memory-store.js");
  const transport = createRouterTransport(
    createTetherRoutes({
      store: createMemoryStore(),
      health: createHealthState(),
      routes: turnRoutes(),
    }),
    {
      router: {
        interceptors: createTetherInterceptors({
          apiKeys: undefined,
          requestTimeoutMs: 10_000,
          log: { error: () => undefined },
        }),
      },
    },
  );
  return { transport, close: () => Promise.resolve() };
}

async function serverTarget(): Promise<Target> {
  const h: ApiServerHarness = await startApiServer({ routes: turnRoutes() });
  return { transport: h.transport, port: h.server.port, close: h.close };
}

const textInput = (text: string) => [{ kind: { case: "text" as const, value: text } }];

async function collect(stream: AsyncIterable<{ event?: TurnEvent }>): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for await (const r of stream) if (r.event) out.push(r.event);
  return out;
}

const textOf = (events: TurnEvent[]) =>
  events.map((e) => (e.event.case === "textDelta" ? e.event.value.text : "")).join("");

for (const [name, start] of [
  ["router transport", routerTarget],
  ["real server", serverTarget],
] as const) {
  describe(`TurnService through the ${name}`, () => {
    let target: Target;
    let client: ReturnType<typeof createClient<typeof TurnService>>;
    beforeAll(async () => {
      target = await start();
      client = createClient(TurnService, target.transport);
    });
    afterAll(() => target.close());

    it("StreamTurn streams the turn to its completion with increasing cursors", async () => {
      const events = await collect(
        client.streamTurn({ sessionId: "t1", input: textInput("hello over the wire") }),
      );
      expect(events[0]?.event.case).toBe("turnStarted");
      expect(textOf(events)).toBe("hello over the wire");
      const last = events.at(-1);
      expect(last?.event.case).toBe("turnCompleted");
      if (last?.event.case === "turnCompleted") expect(last.event.value.headRevision).toBe(2n);
      expect(events.every((e) => e.sessionId === "t1")).toBe(true);
      const cursors = events.map((e) => e.cursor);
      expect([...cursors].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(cursors);
    });

    it("a client-executed tool: the stream requests it, SubmitToolResults answers it", async () => {
      const seen: string[] = [];
      for await (const r of client.streamTurn({
        sessionId: "t2",
        input: textInput("use the tool"),
        clientTools: [
          {
            name: "client_lookup",
            description: "looks up",
            parametersJsonSchema: '{"type":"object"}',
          },
        ],
      })) {
        const e = r.event;
        if (!e) continue;
        seen.push(e.event.case ?? "");
        if (e.event.case === "toolCallRequested") {
          expect(e.event.value.argumentsJson).toBe('{"k":1}');
          const answer = await client.submitToolResults({
            sessionId: "t2",
            turnId: e.turnId,
            results: [{ callId: e.event.value.callId, output: "forty-two" }],
          });
          expect(answer.acceptedCallIds).toEqual(["call-1"]);
        }
        if (e.event.case === "turnCompleted") {
          expect(e.event.value.outcome?.kind.case).toBe("finished");
        }
      }
      expect(seen).toContain("toolCallRequested");
      expect(seen).toContain("toolCallFinished");
    });

    it("token_budget is checked after every model call: a one-call turn over it stops BUDGET_EXHAUSTED", async () => {
      const events = await collect(
        client.streamTurn({
          sessionId: "t-budget",
          input: textInput("spend tokens"),
          options: { tokenBudget: 3n },
        }),
      );
      // The answer streamed and stays; the outcome says the budget ended the turn.
      expect(textOf(events)).toBe("spend tokens");
      const last = events.at(-1);
      expect(last?.event.case).toBe("turnCompleted");
      const outcome =
        last?.event.case === "turnCompleted" ? last.event.value.outcome?.kind : undefined;
      expect(outcome).toMatchObject({
        case: "stopped",
        value: { reason: StopReason.BUDGET_EXHAUSTED },
      });
      expect(events.find((e) => e.event.case === "usageReported")).toBeDefined();
    });

    it("CancelTurn from another call stops the running turn as cancelled", async () => {
      let outcome: unknown;
      for await (const r of client.streamTurn({ sessionId: "t3", input: textInput("hang") })) {
        if (r.event?.event.case === "textDelta") {
          expect((await client.cancelTurn({ sessionId: "t3" })).cancelled).toBe(true);
        }
        if (r.event?.event.case === "turnCompleted") outcome = r.event.event.value.outcome?.kind;
      }
      expect(outcome).toMatchObject({ case: "stopped", value: { reason: StopReason.CANCELLED } });
    });

    it("the reject strategy is ABORTED while a turn runs; the error names the holder", async () => {
      const occupying = client.streamTurn({ sessionId: "t4", input: textInput("hang") });
      const running = occupying[Symbol.asyncIterator]();
      await running.next();
      const error = await expectCode(
        collect(
          client.streamTurn({
            sessionId: "t4",
            input: textInput("x"),
            busyStrategy: BusyStrategy.REJECT,
          }),
        ),
        Code.Aborted,
      );
      expect(error.message).toContain("test-replica");
      await client.cancelTurn({ sessionId: "t4" });
      for (let r = await running.next(); !r.done; r = await running.next());
    });

    it("WatchSession resumes a dropped stream from its last cursor with no gap and no duplicate", async () => {
      const text = "a sentence long enough to be streamed in many small pieces over the wire";
      const dropped = new AbortController();
      const seen: string[] = [];
      let cursor = 0n;
      for await (const r of client.streamTurn(
        { sessionId: "t5", input: textInput(text) },
        { signal: dropped.signal },
      )) {
        cursor = r.event?.cursor ?? cursor;
        if (r.event?.event.case === "textDelta") seen.push(r.event.event.value.text);
        if (seen.length === 4) break;
      }
      const rest = await collect(
        client.watchSession({ sessionId: "t5", afterCursor: cursor, untilTurnCompleted: true }),
      );
      expect(seen.join("") + textOf(rest)).toBe(text);
      expect(rest.every((e) => e.cursor > cursor)).toBe(true);
    });

    it("bad input is refused with INVALID_ARGUMENT naming the field", async () => {
      const empty = await expectCode(
        collect(client.streamTurn({ sessionId: "t6", input: [] })),
        Code.InvalidArgument,
      );
      expect(empty.message).toContain("input");
      const badId = await expectCode(
        collect(client.streamTurn({ sessionId: "bad id!", input: textInput("x") })),
        Code.InvalidArgument,
      );
      expect(badId.message).toContain("session_id");
      const badEnum = await expectCode(
        collect(
          client.streamTurn({
            sessionId: "t6",
            input: textInput("x"),
            busyStrategy: 99 as BusyStrategy,
          }),
        ),
        Code.InvalidArgument,
      );
      expect(badEnum.message).toContain("busy_strategy");
      const badSchema = await expectCode(
        collect(
          client.streamTurn({
            sessionId: "t6",
            input: textInput("x"),
            clientTools: [{ name: "t", description: "", parametersJsonSchema: "{not json" }],
          }),
        ),
        Code.InvalidArgument,
      );
      expect(badSchema.message).toContain("client_tools[0].parameters_json_schema");
      // The server keeps serving.
      expect(
        textOf(
          await collect(client.streamTurn({ sessionId: "t6", input: textInput("still here") })),
        ),
      ).toBe("still here");
      await expectCode(
        client.submitToolResults({
          sessionId: "t6",
          turnId: "no-such-turn",
          results: [{ callId: "c", output: "" }],
        }),
        Code.FailedPrecondition,
      );
    });
  });
}

describe("TurnService from @grpc/grpc-js (second toolchain)", () => {
  let h: ApiServerHarness;
  beforeAll(async () => {
    h = await startApiServer({ routes: turnRoutes() });
  });
  afterAll(() => h.close());

  it("streams a turn", async () => {
    const definition = protoLoader.loadSync("tether/v1/turn_service.proto", {
      includeDirs: [new URL("../../../proto/", import.meta.url).pathname],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      tether: { v1: { TurnService: grpc.ServiceClientConstructor } };
    };
    const client = new pkg.tether.v1.TurnService(
      `127.0.0.1:${h.server.port}`,
      grpc.credentials.createInsecure(),
    );
    const call = (
      client as unknown as {
        StreamTurn(req: object): grpc.ClientReadableStream<{ event: Record<string, unknown> }>;
      }
    ).StreamTurn({
      session_id: "grpc-js-turn",
      input: [{ text: "from grpc-js" }],
    });
    const kinds: string[] = [];
    let text = "";
    for await (const response of call) {
      const event = response.event as { event: string; text_delta?: { text: string } };
      kinds.push(event.event);
      if (event.text_delta) text += event.text_delta.text;
    }
    client.close();
    expect(kinds[0]).toBe("turn_started");
    expect(kinds.at(-1)).toBe("turn_completed");
    expect(text).toBe("from grpc-js");
  });
});
