// GET /v1/agents/sessions/{id}/events on the real server (ADR 0037, "Events out"): raw framing
// (headers before any event, event/data blocks, comment heartbeats, no `id:` lines), the official
// Node SDK's events.stream following a turn started over gRPC on the same port up to idle, and a
// resume from an event id mid-text on another replica (two servers on one Redis) that yields
// exactly the remaining events with the same ids.
import * as http2 from "node:http2";
import { createClient } from "@connectrpc/connect";
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";
import { eventsOf, openSse, type RawSse } from "./sse-client.js";

const servers: WiredServer[] = [];
const streams: RawSse[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  for (const server of servers.splice(0)) await server.close();
});

async function start(env: Record<string, string> = {}, heartbeatMs?: number) {
  const server = await startWiredServer(env, heartbeatMs === undefined ? {} : { heartbeatMs });
  servers.push(server);
  return server;
}

async function sse(url: string, headers: Record<string, string> = {}) {
  const stream = await openSse(url, headers);
  streams.push(stream);
  return stream;
}

const textInput = (text: string) => [{ kind: { case: "text" as const, value: text } }];

/** Runs one turn over gRPC (StreamTurn, which also creates the session) to its end. */
async function runTurn(server: WiredServer, sessionId: string, text: string) {
  const turns = createClient(TurnService, server.as());
  for await (const item of turns.streamTurn({ sessionId, input: textInput(text) })) void item;
}

const isIdle = (event: { type: string }) => event.type === "agent.session.idle";
const run = Date.now().toString(36);

describe("GET /v1/agents/sessions/{id}/events", () => {
  it("raw framing: headers before any event, event/data blocks, comment heartbeats, no id: lines; live from the subscription on", async () => {
    const server = await start({}, 20);
    const sessionId = `sse-raw-${run}`;
    await runTurn(server, sessionId, "before the subscription");
    // Nothing happens on the session: the answer's head arrives anyway (the SDK helpers await it
    // before they post their input).
    const stream = await sse(`${server.baseUrl}/v1/agents/sessions/${sessionId}/events`);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toMatch(/^text\/event-stream/u);
    expect(stream.response.headers.get("cache-control")).toBe("no-cache");
    const first = await stream.next();
    expect(first).toMatchObject({ comment: true, raw: ": ping" });
    await runTurn(server, sessionId, "after it");
    const blocks = await stream.readUntil(isIdle);
    for (const block of blocks) {
      expect(block.raw).not.toMatch(/^id:/mu);
      if (!block.comment) expect(block.raw).toMatch(/^event: [a-z_.]+\ndata: \{.*\}$/u);
      if (block.event) expect(block.raw.startsWith(`event: ${block.event.type}\n`)).toBe(true);
    }
    const events = eventsOf(blocks);
    // Live: the turn before the subscription is not replayed.
    expect(events[0]?.type).toBe("agent.session.turn.created");
    const text = events
      .filter((e) => e.type === "agent.session.turn.output_text.delta")
      .map((e) => e.delta)
      .join("");
    expect(text).toBe("after it");
  });

  it("an unknown session is a 404 in OpenAI's error body, before any stream", async () => {
    const server = await start();
    const response = await fetch(`${server.baseUrl}/v1/agents/sessions/nobody-${run}/events`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/json");
    const bad = await fetch(`${server.baseUrl}/v1/agents/sessions/x/events?after=nope`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: "after" } });
  });

  it("the Node SDK's events.stream follows a turn started over gRPC on the same port up to idle", async () => {
    const server = await start();
    const sessionId = `sse-sdk-${run}`;
    await runTurn(server, sessionId, "warm up");
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "k", maxRetries: 0 });
    const stream = await client.beta.agents.sessions.events.stream(sessionId);
    const turn = runTurn(server, sessionId, "Hello from gRPC");
    const seen: { type: string; [k: string]: unknown }[] = [];
    for await (const event of stream) {
      seen.push(event as unknown as { type: string });
      if (event.type === "agent.session.idle") break;
    }
    await turn;
    expect(seen.map((e) => e.type)).toEqual([
      "agent.session.turn.created",
      "agent.session.in_progress",
      "agent.session.turn.in_progress",
      "agent.session.turn.item.added",
      "agent.session.turn.item.added",
      "agent.session.turn.content_part.added",
      ...seen.filter((e) => e.type.endsWith("output_text.delta")).map((e) => e.type),
      "agent.session.turn.output_text.done",
      "agent.session.turn.content_part.done",
      "agent.session.turn.item.done",
      "agent.session.turn.completed",
      "agent.session.idle",
    ]);
    expect(seen[0]).toMatchObject({ session_id: sessionId, turn: { subagent_id: null } });
    expect(seen.find((e) => e.type === "agent.session.turn.output_text.done")).toMatchObject({
      text: "Hello from gRPC",
    });
    expect(seen.find((e) => e.type === "agent.session.turn.completed")).toMatchObject({
      turn: { status: "completed" },
      usage: { total_tokens: expect.any(Number) as unknown },
    });
  });

  it("resumes after an event id mid-text on another replica: exactly the remaining events, same ids (?after= and Last-Event-ID)", async () => {
    const redis = { TETHER_STORE: "redis", TETHER_REDIS_URL: inject("redisUrl") };
    const a = await start(redis);
    const b = await start(redis);
    const sessionId = `sse-resume-${run}`;
    await runTurn(a, sessionId, "warm up");
    const live = await sse(`${b.baseUrl}/v1/agents/sessions/${sessionId}/events`);
    // 400 characters: the log holds the answer in several text windows, so several deltas.
    const long = Array.from({ length: 40 }, (_, i) => `word-${String(i).padStart(4, "0")}`).join(
      "",
    );
    await runTurn(a, sessionId, long);
    const whole = eventsOf(await live.readUntil(isIdle));
    const deltas = whole.filter((e) => e.type === "agent.session.turn.output_text.delta");
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.map((e) => e.delta).join("")).toBe(long);

    const midText = whole.indexOf(deltas[1] ?? whole[0]!);
    const resumed = await sse(
      `${a.baseUrl}/v1/agents/sessions/${sessionId}/events?after=${whole[midText]?.event_id}`,
    );
    expect(eventsOf(await resumed.readUntil(isIdle))).toEqual(whole.slice(midText + 1));

    // Inside one log entry's events (a `.n` id): the rest of that entry, then what follows.
    const inside = whole.findIndex((e) => /\.\d+$/u.test(e.event_id));
    const byHeader = await sse(`${b.baseUrl}/v1/agents/sessions/${sessionId}/events`, {
      "last-event-id": whole[inside]?.event_id ?? "",
    });
    expect(eventsOf(await byHeader.readUntil(isIdle))).toEqual(whole.slice(inside + 1));
  });

  it("resumes after a live text piece of the driving replica on another replica: the rest of the text once, then the same events", async () => {
    const redis = { TETHER_STORE: "redis", TETHER_REDIS_URL: inject("redisUrl") };
    const a = await start(redis);
    const b = await start(redis);
    const sessionId = `sse-piece-${run}`;
    await runTurn(a, sessionId, "warm up");
    // On the replica that runs the turn, text arrives in the provider's pieces (ADR 0005's
    // partial cursors), finer than the log's windows the other replica reads.
    const live = await sse(`${a.baseUrl}/v1/agents/sessions/${sessionId}/events`);
    const long = Array.from({ length: 40 }, (_, i) => `piece-${String(i).padStart(3, "0")}`).join(
      "",
    );
    await runTurn(a, sessionId, long);
    const whole = eventsOf(await live.readUntil(isIdle));
    const deltas = whole.filter((e) => e.type === "agent.session.turn.output_text.delta");
    const piece = deltas[1];
    expect(piece?.event_id).toMatch(/^evt_\d+$/u);
    const seen = deltas
      .slice(0, 2)
      .map((e) => e.delta)
      .join("");

    const resumed = await sse(
      `${b.baseUrl}/v1/agents/sessions/${sessionId}/events?after=${piece?.event_id}`,
    );
    const rest = eventsOf(await resumed.readUntil(isIdle));
    const restText = rest
      .filter((e) => e.type === "agent.session.turn.output_text.delta")
      .map((e) => e.delta)
      .join("");
    expect(seen + restText).toBe(long);
    // After the text, the same events with the same ids as on the driving replica.
    const afterText = (events: typeof whole) =>
      events.slice(events.findIndex((e) => e.type === "agent.session.turn.output_text.done"));
    expect(afterText(rest)).toEqual(afterText(whole));

    // Cut inside the events of the piece that opened the message (part added, delta not yet).
    const opened = whole.find((e) => e.type === "agent.session.turn.content_part.added");
    expect(opened?.event_id).toMatch(/\.1$/u);
    const fromOpen = await sse(
      `${b.baseUrl}/v1/agents/sessions/${sessionId}/events?after=${opened?.event_id}`,
    );
    const afterOpen = eventsOf(await fromOpen.readUntil(isIdle));
    expect(afterOpen[0]).toEqual(deltas[0]);
    const textAfterOpen = afterOpen
      .filter((e) => e.type === "agent.session.turn.output_text.delta")
      .map((e) => e.delta)
      .join("");
    expect(textAfterOpen).toBe(long);
  });

  it("a client function tool: the call item, requires_action, then its output, the call done, in_progress, the answer, idle", async () => {
    const server = await start({ TETHER_PROVIDER: "scripted-tools" });
    const sessionId = `sse-tool-${run}`;
    await runTurn(server, sessionId, "warm up");
    const stream = await sse(`${server.baseUrl}/v1/agents/sessions/${sessionId}/events`);
    const turns = createClient(TurnService, server.as());
    const running = (async () => {
      const call = turns.streamTurn({
        sessionId,
        input: textInput('/tool get_weather {"city":"Oslo"}'),
        clientTools: [{ name: "get_weather", description: "weather", parametersJsonSchema: "{}" }],
      });
      for await (const item of call) void item;
    })();
    const asked = eventsOf(
      await stream.readUntil((e) => e.type === "agent.session.requires_action"),
    );
    const required = asked.at(-1)?.session as {
      required_actions: { call_id: string; turn_id: string }[];
    };
    const action = required.required_actions[0];
    expect(action).toMatchObject({
      type: "function_call",
      name: "get_weather",
      arguments: { city: "Oslo" },
    });
    expect(asked.at(-2)).toMatchObject({
      type: "agent.session.turn.item.added",
      item: { type: "function_call", id: `fc_${action?.call_id}`, status: "in_progress" },
    });
    // A second stream that joins while the turn waits: live from there, the same events after.
    const joined = await sse(`${server.baseUrl}/v1/agents/sessions/${sessionId}/events`);
    await turns.submitToolResults({
      sessionId,
      turnId: action?.turn_id ?? "",
      results: [{ callId: action?.call_id ?? "", output: "sunny", isError: false }],
    });
    const rest = eventsOf(await stream.readUntil(isIdle));
    await running;
    const types = rest.map((e) => e.type.replace("agent.session.", ""));
    expect(types.slice(0, 3)).toEqual(["turn.item.added", "turn.item.done", "in_progress"]);
    expect(rest[0]).toMatchObject({ item: { type: "function_call_output", output: "sunny" } });
    expect(rest[1]).toMatchObject({ item: { type: "function_call", status: "completed" } });
    expect(types.slice(-3)).toEqual(["turn.item.done", "turn.completed", "idle"]);
    expect(rest.at(-3)).toMatchObject({ item: { phase: "final_answer", status: "completed" } });
    expect(eventsOf(await joined.readUntil(isIdle))).toEqual(rest);
  });

  it("streams over h2c (HTTP/2 without TLS) on the same port too", async () => {
    const server = await start();
    const sessionId = `sse-h2-${run}`;
    await runTurn(server, sessionId, "warm up");
    const session = http2.connect(server.baseUrl);
    try {
      const stream = session.request({ ":path": `/v1/agents/sessions/${sessionId}/events` });
      const head = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        stream.once("response", resolve);
        stream.once("error", reject);
      });
      expect(head[":status"]).toBe(200);
      expect(head["content-type"]).toMatch(/^text\/event-stream/u);
      let body = "";
      stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
      await runTurn(server, sessionId, "over h2c");
      await waitFor(() => body.includes("event: agent.session.idle\n"), { what: "idle over h2c" });
      expect(body).not.toMatch(/^id:/mu);
      expect(body).toContain('"delta":"over h2c"');
      stream.close();
    } finally {
      session.close();
    }
  });

  it("counts toward the concurrent_streams quota: one past the limit is a 429 with retry-after-ms; a closed stream frees its slot", async () => {
    const server = await start({
      TETHER_QUOTAS: JSON.stringify({ tenants: { default: { concurrent_streams: 1 } } }),
    });
    const sessionId = `sse-quota-${run}`;
    await runTurn(server, sessionId, "warm up");
    const url = `${server.baseUrl}/v1/agents/sessions/${sessionId}/events`;
    const first = await sse(url);
    expect(first.response.status).toBe(200);
    const refused = await fetch(url);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after-ms")).toMatch(/^\d+$/u);
    expect(await refused.json()).toMatchObject({ error: { type: "rate_limit_error" } });
    first.close();
    await waitFor(
      async () => {
        const again = await fetch(url);
        if (again.status !== 200) return false;
        await again.body?.cancel();
        return true;
      },
      { what: "the slot to be free again" },
    );
  });

  it("a cancel while a client tool waits: the call done as incomplete, turn.cancelled, idle", async () => {
    const server = await start({ TETHER_PROVIDER: "scripted-tools" });
    const sessionId = `sse-cancel-${run}`;
    await runTurn(server, sessionId, "warm up");
    const stream = await sse(`${server.baseUrl}/v1/agents/sessions/${sessionId}/events`);
    const turns = createClient(TurnService, server.as());
    const running = (async () => {
      const call = turns.streamTurn({
        sessionId,
        input: textInput('/tool get_weather {"city":"Oslo"}'),
        clientTools: [{ name: "get_weather", description: "weather", parametersJsonSchema: "{}" }],
      });
      for await (const item of call) void item;
    })();
    await stream.readUntil((e) => e.type === "agent.session.requires_action");
    await turns.cancelTurn({ sessionId });
    const rest = eventsOf(await stream.readUntil(isIdle));
    await running;
    expect(rest.map((e) => e.type.replace("agent.session.", ""))).toEqual([
      "turn.item.done",
      "turn.cancelled",
      "idle",
    ]);
    expect(rest[0]).toMatchObject({ item: { type: "function_call", status: "incomplete" } });
    expect(rest[1]).toMatchObject({ turn: { status: "cancelled", error: null } });
  });
});
