// The official Node SDK's streaming helpers against the front door (ADR 0037, "Streaming
// create"): `sessions.stream(id, {input, toolHandlers})` with `finalResult()`, and, on two
// replicas over one Redis, a client tool a streaming create's turn parked on, answered through the
// other replica after the first stream closed, then followed there from the last event the first
// stream delivered: exactly the remaining events, once.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

const servers: WiredServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const run = Date.now().toString(36);

async function start(env: Record<string, string> = {}) {
  const server = await startWiredServer({ TETHER_PROVIDER: "scripted-tools", ...env });
  servers.push(server);
  const sdk = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "k", maxRetries: 0 });
  return { server, sdk };
}

const none = { type: "none" as const };
const withLookup = {
  model: "gpt-test",
  tools: [
    {
      type: "function" as const,
      name: "lookup",
      description: "asks the client",
      parameters: { type: "object", properties: { q: { type: "string" } } },
    },
  ],
};

type Event = { event_id: string; type: string } & Record<string, unknown>;

describe("the Node SDK's streaming helpers", () => {
  it("sessions.stream(id, {input, toolHandlers}): the handler answers on the stream; finalResult() has the answer", async () => {
    const { sdk } = await start();
    const session = await sdk.beta.agents.sessions.create({ environment: none, agent: withLookup });
    const asked: unknown[] = [];
    const stream = sdk.beta.agents.sessions.stream(session.id, {
      input: '/tool lookup {"q":"moon"}',
      toolHandlers: {
        lookup: (args) => {
          asked.push(args);
          return { phase: "full" };
        },
      },
    });
    const result = await stream.finalResult();
    expect(asked).toEqual([{ q: "moon" }]);
    expect(result.output_text).toBe('lookup returned {"phase":"full"}');
    expect(result.session_id).toBe(session.id);
    // A second turn on the same helper, now the session is idle again.
    const again = await sdk.beta.agents.sessions
      .stream(session.id, { input: "thanks" })
      .finalResult();
    expect(again.output_text).toBe("thanks");
    expect(again.turn_id).not.toBe(result.turn_id);
  });

  it("a parked client tool answered through another replica after the create stream closed; the rest followed there from the last event id, once", async () => {
    // Parked at once: the turn leaves replica a, and the answer through b resumes it from Redis.
    const redis = {
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: inject("redisUrl"),
      TETHER_PARK_AFTER_MS: "0",
    };
    const a = await start({ ...redis, TETHER_OWNER_ID: `helpers-a-${run}` });
    const b = await start({ ...redis, TETHER_OWNER_ID: `helpers-b-${run}` });
    const created = await a.sdk.beta.agents.sessions.create({
      environment: none,
      agent: withLookup,
      input: '/tool lookup {"q":"across"}',
      stream: true,
    });
    const first: Event[] = [];
    let sessionId = "";
    for await (const event of created) {
      first.push(event as unknown as Event);
      if (event.type === "agent.session.created") sessionId = event.session.id;
      // The client leaves while the turn waits for it (the stream would stay open until idle).
      if (event.type === "agent.session.requires_action") break;
    }
    const action = (
      first.at(-1) as unknown as {
        session: { required_actions: { call_id: string; turn_id: string }[] };
      }
    ).session.required_actions[0];
    expect(action).toMatchObject({ type: "function_call", name: "lookup" });
    await waitFor(
      async () =>
        (await b.sdk.beta.agents.sessions.retrieve(sessionId)).status === "requires_action",
      { what: "the turn to park" },
    );
    const last = first.at(-1)?.event_id ?? "";
    // Back on b from the last event the first stream delivered, before the answer: live from there.
    const live = followUntilIdle(b.sdk, sessionId, { "Last-Event-ID": last });
    await b.sdk.beta.agents.sessions.events.create(sessionId, {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: action?.turn_id ?? "",
          call_id: action?.call_id ?? "",
          success: true,
          output: "answered on b",
        },
      ],
    });
    const followed = await live;
    // Once the turn ended, the same resume reads it all from the log; and the whole log from the
    // created event on is what a stream never cut had: the resume is exactly its rest.
    const resumed = await followUntilIdle(b.sdk, sessionId, { "Last-Event-ID": last });
    const whole = await followUntilIdle(b.sdk, sessionId, { "Last-Event-ID": "evt_0" });
    const cut = whole.findIndex((e) => e.event_id === last);
    expect(cut).toBeGreaterThan(0);
    expect(resumed).toEqual(whole.slice(cut + 1));
    expect(resumed.find((e) => e.type === "agent.session.turn.item.added")).toMatchObject({
      type: "agent.session.turn.item.added",
      item: { type: "function_call_output", output: "answered on b" },
    });
    // Live, the text came in the pieces the driving replica published (their own ids, ADR 0005):
    // the same text once, the same events around it, no event twice.
    expect(new Set(followed.map((e) => e.event_id)).size).toBe(followed.length);
    expect(textOf(followed)).toBe("lookup returned answered on b");
    expect(textOf(resumed)).toBe("lookup returned answered on b");
    expect(withoutDeltas(followed)).toEqual(withoutDeltas(resumed));
  });
});

const isDelta = (e: Event) => e.type === "agent.session.turn.output_text.delta";
const textOf = (events: Event[]) =>
  events
    .filter(isDelta)
    .map((e) => e.delta)
    .join("");
/** The events but the text deltas, without the ids (a live piece's differ from the log's). */
const withoutDeltas = (events: Event[]) =>
  events.filter((e) => !isDelta(e)).map(({ event_id: _id, ...rest }) => rest);

/** GET …/events through the SDK's events.stream from a place, up to the session's idle. */
async function followUntilIdle(sdk: OpenAI, sessionId: string, headers: Record<string, string>) {
  const stream = await sdk.beta.agents.sessions.events.stream(sessionId, {}, { headers });
  const seen: Event[] = [];
  for await (const event of stream) {
    seen.push(event as unknown as Event);
    if (event.type === "agent.session.idle") break;
  }
  return seen;
}
