// A streaming create (ADR 0037, "Streaming create") on the real server with the echo model's
// `/tool` command: raw framing (headers first, `agent.session.created` with the plain create's
// object, the first turn's events, the stream's end at idle), and the official Node SDK's
// AgentSessionCreateStream: `finalResult()`, creation `toolHandlers`, an approval answered with
// `mcp_approval_request_result` on the open stream, a cancel, and a message steered into the turn.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";
import { eventsOf, openSse, type RawSse } from "./sse-client.js";

const servers: WiredServer[] = [];
const streams: RawSse[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  for (const server of servers.splice(0)) await server.close();
});

async function start(env: Record<string, string> = {}) {
  const server = await startWiredServer({ TETHER_PROVIDER: "scripted-tools", ...env });
  servers.push(server);
  const sdk = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "k", maxRetries: 0 });
  return { server, sdk };
}

const none = { type: "none" as const };
const lookup = {
  type: "function" as const,
  name: "lookup",
  description: "asks the client",
  parameters: { type: "object", properties: { q: { type: "string" } } },
};
const withLookup = { model: "gpt-test", tools: [lookup] };

type Event = { event_id: string; type: string } & Record<string, unknown>;
const short = (e: { type: string }) => e.type.replace("agent.session.", "");

/** Reads a raw stream to its end: every event, and that the server ended it. */
async function readToEnd(stream: RawSse) {
  const blocks = [];
  for (let block = await stream.next(); block; block = await stream.next()) blocks.push(block);
  return blocks;
}

describe("POST /v1/agents/sessions with stream: true, raw", () => {
  it("headers first, agent.session.created with the plain create's object, the first turn, then the end at idle", async () => {
    const { server, sdk } = await start();
    const body = {
      environment: none,
      agent: { model: "gpt-test", instructions: "Echo." },
      input: "Hello from a streaming create",
      metadata: { team: "ops" },
      stream: true,
    };
    const stream = await openSse(`${server.baseUrl}/v1/agents/sessions`, {}, body);
    streams.push(stream);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toMatch(/^text\/event-stream/u);
    const blocks = await readToEnd(stream);
    for (const block of blocks) expect(block.raw).not.toMatch(/^id:/mu);
    const events = eventsOf(blocks);
    const created = events[0] as Event & { session: { id: string } };
    expect(created).toMatchObject({ type: "agent.session.created", event_id: "evt_0" });
    expect(created.session.id).toMatch(/^sess_/u);
    // The object a plain create answers: the store's whole AgentSession.
    expect(created.session).toMatchObject({
      object: "agent.session",
      metadata: { team: "ops" },
      agent: { id: `inline_${created.session.id}`, instructions: "Echo." },
      environment: { type: "none" },
      created_at: expect.any(Number) as unknown,
    });
    const types = events.map(short);
    expect(types.slice(0, 4)).toEqual([
      "created",
      "turn.created",
      "in_progress",
      "turn.in_progress",
    ]);
    expect(types.slice(-3)).toEqual(["turn.item.done", "turn.completed", "idle"]);
    const text = events
      .filter((e) => e.type === "agent.session.turn.output_text.delta")
      .map((e) => e.delta)
      .join("");
    expect(text).toBe("Hello from a streaming create");
    // The stream ended because the session is idle: nothing runs or waits on it.
    expect((await sdk.beta.agents.sessions.retrieve(created.session.id)).status).toBe("idle");
    // The same events, ids included, replayed by GET …/events from the created event on.
    const replay = await openSse(
      `${server.baseUrl}/v1/agents/sessions/${created.session.id}/events?after=evt_0`,
    );
    streams.push(replay);
    const replayed = eventsOf(await replay.readUntil((e) => e.type === "agent.session.idle"));
    expect(replayed).toEqual(events.slice(1));
  });

  it("a create without input: agent.session.created, then the end (the session is idle)", async () => {
    const { server } = await start();
    const body = { environment: none, agent: { model: "gpt-test" }, stream: true };
    const stream = await openSse(`${server.baseUrl}/v1/agents/sessions`, {}, body);
    streams.push(stream);
    const events = eventsOf(await readToEnd(stream));
    expect(events.map(short)).toEqual(["created"]);
    expect(events[0]).toMatchObject({ session: { status: "idle", required_actions: [] } });
  });

  it("stream_options: served with a stream (nothing to pad), refused by name without one", async () => {
    const { server, sdk } = await start();
    const refused: unknown = await sdk.beta.agents.sessions
      .create({ environment: none, agent: { model: "m" }, stream_options: {} } as never)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("stream_options");
    expect((await sdk.beta.agents.sessions.list()).data).toEqual([]);
    const body = {
      environment: none,
      agent: { model: "m" },
      stream: true,
      stream_options: { include_obfuscation: false },
    };
    const stream = await openSse(`${server.baseUrl}/v1/agents/sessions`, {}, body);
    streams.push(stream);
    expect(eventsOf(await readToEnd(stream)).map(short)).toEqual(["created"]);
  });
  it("counts toward concurrent_streams: past the limit a 429 before anything is stored; its end frees the slot", async () => {
    const { server, sdk } = await start({
      TETHER_QUOTAS: JSON.stringify({ tenants: { default: { concurrent_streams: 1 } } }),
    });
    const session = await sdk.beta.agents.sessions.create({ environment: none, agent: withLookup });
    // The one slot: a streaming create whose turn waits for its client tool holds it.
    const body = { environment: none, agent: withLookup, input: "/tool lookup {}", stream: true };
    const holder = await openSse(`${server.baseUrl}/v1/agents/sessions`, {}, body);
    streams.push(holder);
    expect(holder.response.status).toBe(200);
    await holder.readUntil((e) => e.type === "agent.session.requires_action");
    const refused = await fetch(`${server.baseUrl}/v1/agents/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ environment: none, agent: { model: "m" }, stream: true }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after-ms")).toMatch(/^\d+$/u);
    const ids = (await sdk.beta.agents.sessions.list()).data.map((s) => s.id);
    expect(ids).toHaveLength(2);
    expect(ids).toContain(session.id);
    holder.close();
    await waitFor(
      async () => {
        const again = await openSse(
          `${server.baseUrl}/v1/agents/sessions`,
          {},
          {
            environment: none,
            agent: { model: "m" },
            stream: true,
          },
        );
        streams.push(again);
        return again.response.status === 200;
      },
      { what: "the slot to be free again" },
    );
  });
});

describe("sessions.create({stream: true}) through the official Node SDK", () => {
  it("finalResult() drains the first turn and answers its final message", async () => {
    const { sdk } = await start();
    const stream = await sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "gpt-test" },
      input: "Streamed and collected",
      stream: true,
    });
    const result = await stream.finalResult();
    expect(result.output_text).toBe("Streamed and collected");
    expect(result.turn.status).toBe("completed");
    expect(result.messages).toHaveLength(1);
    expect(result.session_id).toMatch(/^sess_/u);
  });

  it("with toolHandlers: the helper answers the client tool on the same stream; finalResult() has the answer", async () => {
    const { sdk } = await start();
    const asked: unknown[] = [];
    const stream = await sdk.beta.agents.sessions.create({
      environment: none,
      agent: withLookup,
      input: '/tool lookup {"q":"tides"}',
      stream: true,
      toolHandlers: {
        lookup: (args) => {
          asked.push(args);
          return "high at noon";
        },
      },
    });
    const result = await stream.finalResult();
    expect(asked).toEqual([{ q: "tides" }]);
    expect(result.output_text).toBe("lookup returned high at noon");
    expect(result.turn.status).toBe("completed");
  });

  it("an approval answered with mcp_approval_request_result, then the call's result, on the open stream", async () => {
    // Parked at once, so GET /sessions/{id} shows what the turn waits for.
    const { sdk } = await start({
      TETHER_APPROVAL_REQUIRED_TOOLS: "lookup",
      TETHER_PARK_AFTER_MS: "0",
    });
    const stream = (
      await sdk.beta.agents.sessions.create({
        environment: none,
        agent: withLookup,
        input: "/tool lookup {}",
        stream: true,
      })
    ).withResultCollection();
    const seen: Event[] = [];
    let sessionId = "";
    for await (const event of stream) {
      const e = event as unknown as Event;
      seen.push(e);
      if (event.type === "agent.session.created") sessionId = event.session.id;
      if (event.type !== "agent.session.requires_action") continue;
      // The event's required actions are the AgentSession's, as GET /sessions/{id} shows them
      // once the turn parked (one builder makes both).
      const shown = await waitFor(
        async () => {
          const s = await sdk.beta.agents.sessions.retrieve(sessionId);
          return s.status === "requires_action" ? s : undefined;
        },
        { what: "the session to show its parked turn" },
      );
      expect(event.session.required_actions).toEqual(shown.required_actions);
      const action = event.session.required_actions[0];
      if (action?.type === "mcp_approval_request") {
        await sdk.beta.agents.sessions.events.create(sessionId, {
          events: [
            {
              type: "agent.session.input.mcp_approval_request_result",
              request_id: action.request_id,
              response: { type: "mcp_tool_call", decision: "approve" },
            },
          ],
        });
      } else if (action?.type === "function_call") {
        await sdk.beta.agents.sessions.events.create(sessionId, {
          events: [
            {
              type: "agent.session.input.tool_result",
              turn_id: action.turn_id,
              call_id: action.call_id,
              success: true,
              output: "approved and done",
            },
          ],
        });
      }
    }
    // The loop ended because the server ended the stream at idle.
    expect(seen.at(-1)?.type).toBe("agent.session.idle");
    expect(seen.filter((e) => e.type === "agent.session.requires_action")).toHaveLength(2);
    const result = await stream.finalResult();
    expect(result.output_text).toBe("lookup returned approved and done");
  });

  it("a cancel while the client tool waits: the call done as incomplete, turn.cancelled, idle, the end; finalResult() rejects as cancelled", async () => {
    const { sdk } = await start();
    const stream = (
      await sdk.beta.agents.sessions.create({
        environment: none,
        agent: withLookup,
        input: "/tool lookup {}",
        stream: true,
      })
    ).withResultCollection();
    const seen: Event[] = [];
    let sessionId = "";
    for await (const event of stream) {
      seen.push(event as unknown as Event);
      if (event.type === "agent.session.created") sessionId = event.session.id;
      if (event.type === "agent.session.requires_action") {
        await sdk.beta.agents.sessions.events.create(sessionId, {
          events: [{ type: "agent.session.input.cancel" }],
        });
      }
    }
    expect(seen.slice(-3).map(short)).toEqual(["turn.item.done", "turn.cancelled", "idle"]);
    expect(seen.at(-3)).toMatchObject({ item: { type: "function_call", status: "incomplete" } });
    const error: unknown = await stream.finalResult().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AgentTurnResultError", reason: "cancelled" });
  });

  it("a message sent while the turn waits joins it: one turn on the stream, the message its user item", async () => {
    const { sdk } = await start();
    let sessionId = "";
    const stream = await sdk.beta.agents.sessions.create({
      environment: none,
      agent: withLookup,
      input: "/tool lookup {}",
      stream: true,
      toolHandlers: {
        lookup: async () => {
          // Steered (the default) into the turn that waits for this very call.
          await sdk.beta.agents.sessions.events.create(sessionId, {
            events: [
              {
                type: "agent.session.input.message",
                input: [{ role: "user", content: [{ type: "input_text", text: "and then?" }] }],
              },
            ],
          });
          return "steered";
        },
      },
    });
    const seen: Event[] = [];
    for await (const event of stream) {
      seen.push(event as unknown as Event);
      if (event.type === "agent.session.created") sessionId = event.session.id;
    }
    expect(seen.filter((e) => e.type === "agent.session.turn.created")).toHaveLength(1);
    const users = seen.filter(
      (e) =>
        e.type === "agent.session.turn.item.added" && (e.item as { role?: string }).role === "user",
    );
    expect(users).toHaveLength(2);
    const turnId = (seen[1] as Event & { turn_id: string }).turn_id;
    expect(users.map((e) => (e.item as { turn_id: string }).turn_id)).toEqual([turnId, turnId]);
    expect(seen.slice(-2).map(short)).toEqual(["turn.completed", "idle"]);
    expect((await sdk.beta.agents.sessions.retrieve(sessionId)).status).toBe("idle");
  });

  it("input queued behind the first turn keeps the stream open through the turn it starts; the end comes at that idle", async () => {
    const { sdk } = await start();
    let sessionId = "";
    const stream = await sdk.beta.agents.sessions.create({
      environment: none,
      agent: withLookup,
      input: "/tool lookup {}",
      stream: true,
      toolHandlers: {
        lookup: async () => {
          // Queued for the next turn, not steered into this one.
          await sdk.beta.agents.sessions.events.create(
            sessionId,
            {
              events: [
                {
                  type: "agent.session.input.message",
                  input: [{ role: "user", content: [{ type: "input_text", text: "queued" }] }],
                },
              ],
            },
            { headers: { "Tether-Busy-Strategy": "enqueue" } },
          );
          return "first";
        },
      },
    });
    const seen: Event[] = [];
    for await (const event of stream) {
      seen.push(event as unknown as Event);
      if (event.type === "agent.session.created") sessionId = event.session.id;
    }
    const types = seen.map(short);
    expect(types.filter((t) => t === "turn.created")).toHaveLength(2);
    expect(types.filter((t) => t === "idle")).toHaveLength(2);
    expect(types.at(-1)).toBe("idle");
    const answers = seen.filter((e) => e.type === "agent.session.turn.output_text.done");
    expect(answers.map((e) => e.text)).toEqual(["lookup returned first", "queued"]);
  });
});
