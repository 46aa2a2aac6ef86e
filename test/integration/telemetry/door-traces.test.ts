// Traces of the OpenAI Agents API front door: each HTTP request is a SERVER span named by its
// route, continuing the caller's traceparent; input a request posts is stored with that span, so
// the turn that runs it (in the session driver, after the answer) hangs under the request, as a
// turn hangs under the gRPC call that submitted its input.
import { afterEach, describe, expect, it } from "vitest";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import { loadConfig } from "../../../src/server/config.js";
import { startTelemetry, type Telemetry } from "../../../src/telemetry/index.js";
import type { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import {
  SPAN_KIND,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "../../support/otlp-receiver.js";
import { createRuntimeHarness, type RuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const EVENTS_TRACE = "e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7";

let receiver: OtlpReceiver | undefined;
let telemetry: Telemetry | undefined;
let server: ApiServerHarness | undefined;
let rt: RuntimeHarness | undefined;
afterEach(async () => {
  await server?.close();
  await rt?.runtime.drain(1_000);
  await telemetry?.shutdown();
  await receiver?.close();
  server = rt = telemetry = receiver = undefined;
});

async function tracedDoor(): Promise<{ baseUrl: string; flush(): Promise<void> }> {
  receiver = await startOtlpReceiver();
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
  const config = loadConfig({ TETHER_PORT: "0", OTEL_BSP_SCHEDULE_DELAY: "20", ...env });
  telemetry = await startTelemetry(config.tracing, { instanceId: "door" });
  const tracer = telemetry.tracer;
  if (!tracer) throw new Error("tracing is on: a tracer exists");
  rt = createRuntimeHarness({
    provider: createScriptedProvider({
      script: () => ({ events: [{ type: "text_delta", text: "hi" }], response: {} }),
    }),
    tracer,
  });
  server = await startApiServer({
    env,
    store: rt.store as MemoryStore,
    runtime: rt.runtime,
    tracer,
  });
  const t = telemetry;
  return { baseUrl: server.baseUrl, flush: () => t.flush() };
}

const post = (url: string, body: unknown, traceparent: string) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", traceparent, authorization: "Bearer k" },
    body: JSON.stringify(body),
  });

function one(spans: ReceivedSpan[], pred: (s: ReceivedSpan) => boolean, what: string) {
  const found = spans.filter(pred);
  expect(found, what).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

describe("traces of the front door", () => {
  it("a request is a SERVER span named by its route in the caller's trace; the turns of the input it posts hang under it", async () => {
    const door = await tracedDoor();
    const created = await post(
      `${door.baseUrl}/v1/agents/sessions`,
      { agent: { model: "m" }, environment: { type: "none" }, input: "hello" },
      `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
    );
    expect(created.status).toBe(200);
    const session = (await created.json()) as { id: string };
    const spansOf = async (n: number) => {
      await door.flush();
      return waitFor(
        () => {
          const turns = receiver!.spans.filter((s) => s.name === "invoke_agent");
          return turns.length >= n ? receiver!.spans : undefined;
        },
        { what: `${n} turn spans` },
      );
    };
    const first = await spansOf(1);
    const create = one(first, (s) => s.name === "POST /v1/agents/sessions", "the create's span");
    expect(create).toMatchObject({
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      kind: SPAN_KIND.server,
      attributes: {
        "http.request.method": "POST",
        "http.route": "/v1/agents/sessions",
        "url.path": "/v1/agents/sessions",
        "http.response.status_code": 200,
      },
    });
    const firstTurn = one(first, (s) => s.name === "invoke_agent", "the first turn");
    expect(firstTurn).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: create.spanId });

    // A message posted to the events route: its turn hangs under that request, in its trace.
    const posted = await post(
      `${door.baseUrl}/v1/agents/sessions/${session.id}/events`,
      {
        events: [
          {
            type: "agent.session.input.message",
            input: [{ role: "user", content: [{ type: "input_text", text: "again" }] }],
          },
        ],
      },
      `00-${EVENTS_TRACE}-${CALLER_SPAN}-01`,
    );
    expect(posted.status).toBe(202);
    const second = await spansOf(2);
    const events = one(
      second,
      (s) => s.name === "POST /v1/agents/sessions/:session_id/events",
      "the events post's span",
    );
    expect(events).toMatchObject({
      traceId: EVENTS_TRACE,
      attributes: {
        "http.route": "/v1/agents/sessions/:session_id/events",
        "url.path": `/v1/agents/sessions/${session.id}/events`,
        "http.response.status_code": 202,
      },
    });
    const turn = one(
      second,
      (s) => s.name === "invoke_agent" && s.traceId === EVENTS_TRACE,
      "the second turn",
    );
    expect(turn.parentSpanId).toBe(events.spanId);
  });

  it("a path no route serves is a span named by its method alone; a 4xx is not a failed span", async () => {
    const door = await tracedDoor();
    const missing = await fetch(`${door.baseUrl}/v1/no/such/route?x=1`, {
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    });
    expect(missing.status).toBe(404);
    await door.flush();
    const span = await waitFor(() => receiver!.spans.find((s) => s.traceId === CALLER_TRACE), {
      what: "the request's span",
    });
    expect(span.name).toBe("GET");
    expect(span.attributes["http.route"]).toBeUndefined();
    expect(span.attributes).toMatchObject({
      "url.path": "/v1/no/such/route",
      "http.response.status_code": 404,
    });
    expect(span.statusCode).not.toBe(2);
  });
});
