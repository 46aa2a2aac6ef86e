// Traces of a real turn: two replicas of the server composition on one Redis, each exporting its
// spans over OTLP/HTTP to a receiver on loopback. The caller's traceparent continues into
// Tether; the turn's span hangs under the RPC that submitted its input, its model and tool calls
// under it; the turn parks on one replica and resumes on the other, whose span links back.
import { randomUUID } from "node:crypto";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Health } from "../../../src/gen/grpc/health/v1/health_pb.js";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createQueueService } from "../../../src/api/queue-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { createTurnService } from "../../../src/api/turn-service.js";
import { QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { BusyStrategy, type TurnEvent } from "../../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import type { ToolExecutor } from "../../../src/ports/tool-executor.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { buildProvider } from "../../../src/server/build-runtime.js";
import { loadConfig } from "../../../src/server/config.js";
import { startTelemetry, telemetryOff, type Telemetry } from "../../../src/telemetry/index.js";
import { startApiServer } from "../../support/api-server.js";
import { startFakeOpenAI } from "../../support/fake-openai-server.js";
import {
  SPAN_KIND,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "../../support/otlp-receiver.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

// The caller's own trace: Tether's spans continue it.
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const CALLER_TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const ANSWER_SPAN = "b7ad6b7169203331";
// The callers of a steer and of a queued input, in traces of their own.
const STEER_TRACE = "5c0ffee05c0ffee05c0ffee05c0ffee0";
const QUEUE_TRACE = "9e11e9e11e9e11e9e11e9e11e9e11e90";
// The caller of a raw QueueService.SubmitInput, in a trace of its own.
const RAW_TRACE = "7a5e7a5e7a5e7a5e7a5e7a5e7a5e7a5e";

/** First call: the server tool and the client tool; once their results are in: one answer. */
function provider(): ModelProvider {
  return createScriptedProvider({
    script: (request) => {
      if (request.messages.some((m) => m.role === "tool")) {
        return {
          events: [{ type: "text_delta", text: "the answer is 42" }],
          response: {
            usage: {
              inputTokens: 30,
              outputTokens: 5,
              cacheReadTokens: 0,
              cacheWriteTokens: 0,
              reasoningTokens: 0,
            },
          },
        };
      }
      return {
        response: {
          parts: [
            {
              type: "tool_call",
              callId: "echo-1",
              toolName: "server_echo",
              argumentsJson: '{"q":1}',
            },
            { type: "tool_call", callId: "lookup-1", toolName: "lookup", argumentsJson: '{"q":2}' },
          ],
          usage: {
            inputTokens: 12,
            outputTokens: 7,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
          },
        },
      };
    },
  });
}

const serverTools: ToolExecutor = {
  definitions: () => [
    { name: "server_echo", description: "runs on the server", inputSchema: { type: "object" } },
  ],
  execute: () => Promise.resolve({ output: "echoed" }),
};

interface Replica {
  baseUrl: string;
  turns: Client<typeof TurnService>;
  queue: Client<typeof QueueService>;
  telemetry: Telemetry;
  close(): Promise<void>;
}

const open: Replica[] = [];
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
  await receiver?.close();
  receiver = undefined;
});

/** One replica as main.ts builds it: config from the environment, telemetry, runtime, server. */
async function replica(
  name: string,
  namespace: string,
  env: Record<string, string>,
  model: ModelProvider = provider(),
) {
  // Batches leave after 20 ms (the standard variable; the default is 5 s).
  const config = loadConfig({ TETHER_PORT: "0", OTEL_BSP_SCHEDULE_DELAY: "20", ...env });
  const telemetry = await startTelemetry(config.tracing, { instanceId: name });
  const { runtime, store } = createRuntimeHarness({
    provider: model,
    serverTools,
    parkAfterMs: 0,
    clientToolTimeoutMs: 20_000,
    ownerId: `${name}-${namespace}`,
    namespace,
    redis,
    ...(telemetry.tracer && { tracer: telemetry.tracer }),
  });
  const server = await startApiServer({
    env,
    routes: (router) => {
      router.service(TurnService, createTurnService({ runtime }));
      router.service(SessionService, createSessionService({ store }));
      router.service(QueueService, createQueueService({ store }));
    },
    ...(telemetry.tracer && { tracer: telemetry.tracer }),
  });
  const r: Replica = {
    baseUrl: server.baseUrl,
    turns: createClient(TurnService, server.transport),
    queue: createClient(QueueService, server.transport),
    telemetry,
    close: async () => {
      await runtime.drain(1_000);
      await server.close();
      await telemetry.shutdown();
    },
  };
  open.push(r);
  return r;
}

/** Runs the two-tool turn: it parks on `a`, the client's answer lands on `b`, `b` resumes it. */
async function parkedTurnAcross(a: Replica, b: Replica, sessionId: string): Promise<string> {
  const events: TurnEvent[] = [];
  const stream = (async () => {
    const call = a.turns.streamTurn(
      {
        sessionId,
        input: [{ kind: { case: "text", value: "use both tools" } }],
        clientTools: [
          {
            name: "lookup",
            description: "answered by the client",
            parametersJsonSchema: '{"type":"object"}',
          },
        ],
        options: { model: "scripted-1" },
      },
      { headers: { traceparent: CALLER_TRACEPARENT } },
    );
    for await (const r of call) if (r.event) events.push(r.event);
  })();
  const parked = await waitFor(() => events.find((e) => e.event.case === "turnParked"), {
    what: "the turn to park",
  });
  await b.turns.submitToolResults(
    {
      sessionId,
      turnId: parked.turnId,
      results: [{ callId: "lookup-1", output: "42", isError: false }],
    },
    { headers: { traceparent: `00-${CALLER_TRACE}-${ANSWER_SPAN}-01` } },
  );
  await stream;
  expect(events.at(-1)?.event.case).toBe("turnCompleted");
  return parked.turnId;
}

function one(
  spans: ReceivedSpan[],
  pred: (s: ReceivedSpan) => boolean,
  what: string,
): ReceivedSpan {
  const found = spans.filter(pred);
  if (found.length !== 1) throw new Error(`${found.length} spans are ${what}`);
  return found[0] as ReceivedSpan;
}

async function tracedTurn(protocol: string, extra: Record<string, string> = {}) {
  receiver = await startOtlpReceiver();
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: "tether-test",
    ...extra,
  };
  const namespace = `traces-${randomUUID()}`;
  const a = await replica("replica-a", namespace, env);
  const b = await replica("replica-b", namespace, env);
  const sessionId = `s-${randomUUID()}`;
  const turnId = await parkedTurnAcross(a, b, sessionId);
  await Promise.all([a.telemetry.flush(), b.telemetry.flush()]);
  const spans = receiver.spans;
  // The stream's end and the turn span's end race: wait for both spans that end last.
  await waitFor(
    () =>
      spans.some((s) => s.name === "tether.v1.TurnService/StreamTurn") &&
      spans.some(
        (s) => s.name === "invoke_agent" && s.attributes["tether.turn.end"] === "finished",
      ),
    { what: "the StreamTurn span and the resumed turn's span" },
  );
  return { spans, turnId, sessionId, requests: receiver.requests };
}

const CONTENT_KEYS = [
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
];

for (const [protocol, contentType] of [
  ["http/protobuf", "application/x-protobuf"],
  ["http/json", "application/json"],
] as const) {
  describe(`traces over OTLP ${protocol}`, () => {
    it("one span tree per turn: the caller's trace, the RPC, invoke_agent, chat and execute_tool, linked across the park", async () => {
      const { spans, turnId, sessionId, requests } = await tracedTurn(protocol);
      expect(new Set(requests.map((r) => r.contentType))).toEqual(new Set([contentType]));
      expect(new Set(requests.map((r) => r.path))).toEqual(new Set(["/v1/traces"]));

      const rpc = one(spans, (s) => s.name === "tether.v1.TurnService/StreamTurn", "StreamTurn");
      expect(rpc).toMatchObject({
        traceId: CALLER_TRACE,
        parentSpanId: CALLER_SPAN,
        kind: SPAN_KIND.server,
        attributes: {
          "rpc.system": "grpc",
          "rpc.service": "tether.v1.TurnService",
          "rpc.method": "StreamTurn",
          "rpc.grpc.status_code": 0,
        },
      });
      expect(rpc.resource).toMatchObject({
        "service.name": "tether-test",
        "service.instance.id": "replica-a",
      });

      const turns = spans.filter((s) => s.name === "invoke_agent");
      expect(turns).toHaveLength(2);
      const first = one(turns, (s) => s.attributes["tether.turn.end"] === "parked", "parked");
      const resumed = one(turns, (s) => s.attributes["tether.turn.end"] === "finished", "done");
      expect(first).toMatchObject({
        traceId: CALLER_TRACE,
        parentSpanId: rpc.spanId,
        kind: SPAN_KIND.internal,
        links: [],
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.conversation.id": `default:${sessionId}`,
          "gen_ai.provider.name": "scripted",
          "tether.turn.id": turnId,
          "tether.turn.resumed": false,
          "tether.turn.outcome": "parked",
          // Fencing tokens start at the Redis clock in ms (ADR 0022): compared, not spelled out.
          "tether.lease.fencing_token": expect.any(Number),
        },
      });
      const parkedToken = first.attributes["tether.lease.fencing_token"] as number;
      expect(first.resource["service.instance.id"]).toBe("replica-a");
      expect(first.events.map((e) => e.name)).toEqual([
        "tether.lease.claimed",
        "tether.turn.parked",
      ]);
      expect(first.events[1]?.attributes).toEqual({
        "tether.lease.fencing_token": parkedToken,
        "tether.turn.waiting_on": ["lookup-1"],
      });

      // The resumed part: the other replica, under the same RPC, linked to the part before the park.
      expect(resumed).toMatchObject({
        traceId: CALLER_TRACE,
        parentSpanId: rpc.spanId,
        links: [{ traceId: CALLER_TRACE, spanId: first.spanId }],
        attributes: {
          "tether.turn.id": turnId,
          "tether.turn.resumed": true,
          "tether.turn.outcome": "finished.assistant_message",
          "tether.session.head_revision": 2,
        },
      });
      expect(resumed.attributes["tether.lease.fencing_token"]).toBeGreaterThan(parkedToken);
      expect(resumed.resource["service.instance.id"]).toBe("replica-b");
      expect(resumed.events.map((e) => e.name)).toEqual([
        "tether.lease.claimed",
        "tether.turn.committed",
      ]);

      const children = (parent: ReceivedSpan) =>
        spans
          .filter((s) => s.parentSpanId === parent.spanId)
          .map((s) => s.name)
          .sort();
      expect(children(first)).toEqual([
        "chat scripted-1",
        "execute_tool lookup",
        "execute_tool server_echo",
      ]);
      expect(children(resumed)).toEqual(["chat scripted-1", "execute_tool lookup"]);

      const firstChat = one(
        spans,
        (s) => s.parentSpanId === first.spanId && s.name.startsWith("chat"),
        "chat",
      );
      expect(firstChat).toMatchObject({
        traceId: CALLER_TRACE,
        kind: SPAN_KIND.client,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "scripted",
          "gen_ai.request.model": "scripted-1",
          "gen_ai.usage.input_tokens": 12,
          "gen_ai.usage.output_tokens": 7,
          "gen_ai.response.finish_reasons": ["tool_call"],
        },
      });
      const lastChat = one(
        spans,
        (s) => s.parentSpanId === resumed.spanId && s.name.startsWith("chat"),
        "chat",
      );
      expect(lastChat.attributes).toMatchObject({
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 5,
        "gen_ai.response.finish_reasons": ["stop"],
      });

      const tools = spans.filter((s) => s.name.startsWith("execute_tool"));
      const echo = one(tools, (s) => s.attributes["gen_ai.tool.name"] === "server_echo", "echo");
      expect(echo).toMatchObject({
        kind: SPAN_KIND.internal,
        statusCode: 0,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.call.id": "echo-1",
          "tether.tool.origin": "server",
        },
      });
      const parkedLookup = one(
        tools,
        (s) => s.parentSpanId === first.spanId && s.attributes["gen_ai.tool.name"] === "lookup",
        "lookup",
      );
      expect(parkedLookup.attributes).toMatchObject({
        "gen_ai.tool.call.id": "lookup-1",
        "tether.tool.origin": "client",
        "tether.tool.parked": true,
      });
      expect(parkedLookup.statusCode).toBe(0);
      const answered = one(tools, (s) => s.parentSpanId === resumed.spanId, "answered lookup");
      expect(answered.attributes).toMatchObject({
        "gen_ai.tool.call.id": "lookup-1",
        "tether.tool.origin": "client",
      });

      // The answer's own RPC continues the caller's trace on the replica that took it.
      const answer = one(
        spans,
        (s) => s.name === "tether.v1.TurnService/SubmitToolResults",
        "answer",
      );
      expect(answer).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: ANSWER_SPAN });
      expect(answer.resource["service.instance.id"]).toBe("replica-b");

      // No message content unless asked for.
      for (const span of spans) {
        for (const key of CONTENT_KEYS) expect(span.attributes[key]).toBeUndefined();
      }
    });
  });
}

describe("traces of a model the turn does not name", () => {
  it("with TETHER_MODEL and a turn naming no model, the chat span names the model sent and the one that answered", async () => {
    receiver = await startOtlpReceiver();
    const fake = await startFakeOpenAI({ contextLimit: 100_000, answerChars: 20 });
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
      // The provider as main.ts builds it from the environment.
      const openai = buildProvider(
        loadConfig({
          TETHER_PROVIDER: "openai",
          TETHER_OPENAI_API_KEY: "test-key",
          TETHER_OPENAI_BASE_URL: fake.baseURL,
          TETHER_MODEL: "gpt-traced",
        }).provider,
      );
      const a = await replica("replica-a", `traces-${randomUUID()}`, env, openai);
      let last: TurnEvent | undefined;
      for await (const r of a.turns.streamTurn({
        sessionId: `s-${randomUUID()}`,
        input: [{ kind: { case: "text", value: "hello" } }],
      })) {
        if (r.event) last = r.event;
      }
      expect(last?.event.case).toBe("turnCompleted");
      await a.telemetry.flush();
      const chat = await waitFor(
        () => receiver?.spans.find((s) => s.attributes["gen_ai.operation.name"] === "chat"),
        { what: "the chat span" },
      );
      expect(chat).toMatchObject({
        name: "chat gpt-traced",
        attributes: {
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": "gpt-traced",
          // The fake names the model it was asked for in every chunk.
          "gen_ai.response.model": "gpt-traced",
        },
      });
    } finally {
      await fake.close();
    }
  });
});

describe("traces across the input queue", () => {
  it("a steer links the turn that admits it to its submitter; a queued input's turn hangs under its submitter", async () => {
    receiver = await startOtlpReceiver();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
    const namespace = `traces-${randomUUID()}`;
    const a = await replica("replica-a", namespace, env);
    const b = await replica("replica-b", namespace, env);
    const sessionId = `s-${randomUUID()}`;
    /** A stream's events as they come, and its end. */
    const follow = (call: AsyncIterable<{ event?: TurnEvent }>) => {
      const events: TurnEvent[] = [];
      const done = (async () => {
        for await (const r of call) if (r.event) events.push(r.event);
      })();
      return { events, done };
    };
    const first = follow(
      a.turns.streamTurn(
        {
          sessionId,
          input: [{ kind: { case: "text", value: "use both tools" } }],
          clientTools: [
            { name: "lookup", description: "by the client", parametersJsonSchema: "{}" },
          ],
        },
        { headers: { traceparent: CALLER_TRACEPARENT } },
      ),
    );
    const parked = await waitFor(() => first.events.find((e) => e.event.case === "turnParked"), {
      what: "the first turn to park",
    });
    // While parked: a steer (admitted when the turn resumes) and a queued input (the next turn),
    // each from a caller of its own, on the other replica.
    const steered = follow(
      b.turns.streamTurn(
        {
          sessionId,
          input: [{ kind: { case: "text", value: "and be brief" } }],
          busyStrategy: BusyStrategy.STEER,
        },
        { headers: { traceparent: `00-${STEER_TRACE}-${"1".repeat(16)}-01` } },
      ),
    );
    const queued = follow(
      b.turns.streamTurn(
        { sessionId, input: [{ kind: { case: "text", value: "then this" } }] },
        { headers: { traceparent: `00-${QUEUE_TRACE}-${"2".repeat(16)}-01` } },
      ),
    );
    // Both stored before the answer: each stream says so as it starts waiting.
    await waitFor(
      () =>
        steered.events.some((e) => e.event.case === "inputQueued") &&
        queued.events.some((e) => e.event.case === "inputQueued"),
      { what: "the steer and the queued input to be stored" },
    );
    await b.turns.submitToolResults({
      sessionId,
      turnId: parked.turnId,
      results: [{ callId: "lookup-1", output: "42", isError: false }],
    });
    await Promise.all([first.done, steered.done, queued.done]);
    expect(steered.events.some((e) => e.event.case === "inputAdmitted")).toBe(true);
    expect(queued.events.at(-1)?.event.case).toBe("turnCompleted");
    await Promise.all([a.telemetry.flush(), b.telemetry.flush()]);
    const spans = receiver.spans;
    await waitFor(
      () =>
        spans.filter((s) => s.name.endsWith("/StreamTurn")).length === 3 &&
        spans.filter(
          (s) => s.name === "invoke_agent" && s.attributes["tether.turn.end"] === "finished",
        ).length === 2,
      { what: "three StreamTurn spans and the two finished turns" },
    );
    const steerRpc = one(
      spans,
      (s) => s.name.endsWith("/StreamTurn") && s.traceId === STEER_TRACE,
      "steer",
    );
    const queueRpc = one(
      spans,
      (s) => s.name.endsWith("/StreamTurn") && s.traceId === QUEUE_TRACE,
      "queue",
    );
    const resumed = one(
      spans,
      (s) => s.name === "invoke_agent" && s.attributes["tether.turn.resumed"] === true,
      "resumed",
    );
    // The resumed part: still the first caller's trace, linked to its earlier part and the steer.
    expect(resumed.traceId).toBe(CALLER_TRACE);
    expect(resumed.links).toContainEqual({ traceId: STEER_TRACE, spanId: steerRpc.spanId });
    expect(resumed.links).toHaveLength(2);
    // The queued input's turn: a child of the request that queued it.
    const next = one(
      spans,
      (s) => s.name === "invoke_agent" && s.traceId === QUEUE_TRACE,
      "the queued input's turn",
    );
    expect(next).toMatchObject({ parentSpanId: queueRpc.spanId, links: [] });
  });
  it("an input submitted raw through QueueService.SubmitInput: its turn hangs under the submitting RPC, the payload as written", async () => {
    receiver = await startOtlpReceiver();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
    const namespace = `traces-${randomUUID()}`;
    const a = await replica("replica-a", namespace, env);
    const b = await replica("replica-b", namespace, env);
    const sessionId = `s-${randomUUID()}`;
    const events: TurnEvent[] = [];
    const first = (async () => {
      const call = a.turns.streamTurn(
        {
          sessionId,
          input: [{ kind: { case: "text", value: "use both tools" } }],
          clientTools: [
            { name: "lookup", description: "by the client", parametersJsonSchema: "{}" },
          ],
        },
        { headers: { traceparent: CALLER_TRACEPARENT } },
      );
      for await (const r of call) if (r.event) events.push(r.event);
    })();
    const parked = await waitFor(() => events.find((e) => e.event.case === "turnParked"), {
      what: "the turn to park",
    });
    // While the turn is parked, a client queues plain text for the next turn on the other
    // replica, under a trace of its own.
    const submitted = await b.queue.submitInput(
      { sessionId, delivery: { kind: { case: "nextTurn", value: {} } }, payload: "then this" },
      { headers: { traceparent: `00-${RAW_TRACE}-${"3".repeat(16)}-01` } },
    );
    expect(submitted.input?.payload).toBe("then this");
    await b.turns.submitToolResults({
      sessionId,
      turnId: parked.turnId,
      results: [{ callId: "lookup-1", output: "42", isError: false }],
    });
    await first;
    expect(events.at(-1)?.event.case).toBe("turnCompleted");
    const spans = receiver.spans;
    await waitFor(
      async () => {
        await Promise.all([a.telemetry.flush(), b.telemetry.flush()]);
        return (
          spans.some((s) => s.name.endsWith("/SubmitInput")) &&
          spans.filter(
            (s) => s.name === "invoke_agent" && s.attributes["tether.turn.end"] === "finished",
          ).length === 2
        );
      },
      { what: "the SubmitInput span and the two finished turns", timeoutMs: 20_000 },
    );
    const submitRpc = one(spans, (s) => s.name.endsWith("/SubmitInput"), "SubmitInput");
    expect(submitRpc.traceId).toBe(RAW_TRACE);
    // The stored input names that span, beside the payload the client wrote.
    expect(submitted.input?.trace).toBe(`00-${RAW_TRACE}-${submitRpc.spanId}-01`);
    const next = one(
      spans,
      (s) =>
        s.name === "invoke_agent" &&
        s.attributes["tether.turn.resumed"] === false &&
        s.traceId !== CALLER_TRACE,
      "the queued input's turn",
    );
    expect(next).toMatchObject({ traceId: RAW_TRACE, parentSpanId: submitRpc.spanId, links: [] });
  });
});

describe("traces of the server's own QueueService", () => {
  it("the composed server's SubmitInput keeps its RPC span with the input, beside the payload as written", async () => {
    receiver = await startOtlpReceiver();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
    const config = loadConfig({ TETHER_PORT: "0", OTEL_BSP_SCHEDULE_DELAY: "20", ...env });
    const telemetry = await startTelemetry(config.tracing, { instanceId: "queue-only" });
    const server = await startApiServer({
      env,
      ...(telemetry.tracer && { tracer: telemetry.tracer }),
    });
    open.push({
      baseUrl: server.baseUrl,
      turns: createClient(TurnService, server.transport),
      queue: createClient(QueueService, server.transport),
      telemetry,
      close: async () => {
        await server.close();
        await telemetry.shutdown();
      },
    });
    const queue = createClient(QueueService, server.transport);
    const sessionId = `s-${randomUUID()}`;
    await queue.submitInput(
      { sessionId, delivery: { kind: { case: "nextTurn", value: {} } }, payload: '{"raw":1}' },
      { headers: { traceparent: `00-${RAW_TRACE}-${"4".repeat(16)}-01` } },
    );
    const [listed] = (await queue.listInputs({ sessionId })).inputs;
    expect(listed?.payload).toBe('{"raw":1}');
    await telemetry.flush();
    const spans = receiver.spans;
    const rpc = await waitFor(() => spans.find((s) => s.name.endsWith("/SubmitInput")), {
      what: "the SubmitInput span",
    });
    expect(listed?.trace).toBe(`00-${RAW_TRACE}-${rpc.spanId}-01`);
  });
});

describe("traces of the Connect protocol", () => {
  it("a Connect call (HTTP/1.1, JSON) is an RPC span with rpc.system connect_rpc, in the caller's trace", async () => {
    receiver = await startOtlpReceiver();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
    const a = await replica("replica-a", `traces-${randomUUID()}`, env);
    const sessions = createClient(
      SessionService,
      createConnectTransport({ baseUrl: a.baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
    );
    await sessions.createSession(
      { sessionId: `s-${randomUUID()}` },
      {
        headers: { traceparent: CALLER_TRACEPARENT },
      },
    );
    // Probes' health checks are not traced (a root trace every few seconds).
    const health = createClient(Health, createGrpcTransport({ baseUrl: a.baseUrl }));
    await health.check({ service: "" });
    await a.telemetry.flush();
    const spans = receiver.spans;
    const span = await waitFor(
      () => spans.find((s) => s.name === "tether.v1.SessionService/CreateSession"),
      { what: "the CreateSession span" },
    );
    expect(spans.map((s) => s.name)).toEqual(["tether.v1.SessionService/CreateSession"]);
    expect(span).toMatchObject({
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      kind: SPAN_KIND.server,
      attributes: {
        "rpc.system": "connect_rpc",
        "rpc.service": "tether.v1.SessionService",
        "rpc.method": "CreateSession",
        "rpc.grpc.status_code": 0,
      },
    });
  });
});

describe("traces with content capture", () => {
  it("TETHER_OTEL_CAPTURE_CONTENT=true records messages, tool arguments and results", async () => {
    const { spans } = await tracedTurn("http/protobuf", { TETHER_OTEL_CAPTURE_CONTENT: "true" });
    const firstChat = one(
      spans,
      (s) =>
        s.name.startsWith("chat") &&
        s.attributes["gen_ai.response.finish_reasons"]?.toString() === "tool_call",
      "first chat",
    );
    expect(JSON.parse(firstChat.attributes["gen_ai.input.messages"] as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "use both tools" }] },
    ]);
    expect(JSON.parse(firstChat.attributes["gen_ai.output.messages"] as string)).toEqual([
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: "echo-1", name: "server_echo", arguments: '{"q":1}' },
          { type: "tool_call", id: "lookup-1", name: "lookup", arguments: '{"q":2}' },
        ],
        finish_reason: "tool_call",
      },
    ]);
    const echo = one(spans, (s) => s.attributes["gen_ai.tool.name"] === "server_echo", "echo");
    expect(echo.attributes["gen_ai.tool.call.arguments"]).toBe('{"q":1}');
    expect(echo.attributes["gen_ai.tool.call.result"]).toBe('"echoed"');
  });
});

describe("tracing off", () => {
  it("without an endpoint nothing is exported and no tracer exists", async () => {
    receiver = await startOtlpReceiver();
    // Only the protocol is set: no endpoint, so tracing is off.
    const env = { OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" };
    const namespace = `traces-off-${randomUUID()}`;
    const a = await replica("replica-a", namespace, env);
    const b = await replica("replica-b", namespace, env);
    expect(a.telemetry).toBe(telemetryOff);
    expect(a.telemetry.tracer).toBeUndefined();
    await parkedTurnAcross(a, b, `s-${randomUUID()}`);
    await Promise.all([a.telemetry.flush(), b.telemetry.flush()]);
    expect(receiver.requests).toEqual([]);
  });
});
