// Turns and items on the front door (ADR 0037, "Items and turns") with the official Node SDK: a
// session's turns from their durable records (status, times, usage, agent), a turn parked on a
// client tool read as waiting, and the items of the session and of one turn listed with the ids
// the event stream showed; auto-pagination in both orders, and ConversationCursorPage's last_id.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

let server: WiredServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const message = (text: string) => ({
  events: [
    {
      type: "agent.session.input.message" as const,
      input: [{ role: "user" as const, content: [{ type: "input_text" as const, text }] }],
    },
  ],
});

type Streamed = {
  type: string;
  item?: { id: string };
  turn_id?: string | null;
  session?: { required_actions: { call_id: string; turn_id: string }[] };
};

/** Posts `text` with the session's stream open, then reads it to idle: the item ids it showed. */
async function turnOf(client: OpenAI, sessionId: string, text: string, answer?: string) {
  const stream = await client.beta.agents.sessions.events.stream(sessionId);
  await client.beta.agents.sessions.events.create(sessionId, message(text));
  const ids: string[] = [];
  let turnId = "";
  for await (const raw of stream) {
    const event = raw as unknown as Streamed;
    if (event.type === "agent.session.turn.created") turnId = event.turn_id ?? "";
    if (event.type.startsWith("agent.session.turn.item.") && event.item) {
      if (!ids.includes(event.item.id)) ids.push(event.item.id);
    }
    if (event.type === "agent.session.requires_action" && answer !== undefined) {
      const action = event.session?.required_actions[0];
      if (!action) throw new Error("requires_action without an action");
      // The parked turn reads as waiting while the client's call is open.
      await waitFor(
        async () => {
          const turn = await client.beta.agents.sessions.turns.retrieve(action.turn_id, {
            session_id: sessionId,
          });
          return turn.status === "waiting";
        },
        { what: "the parked turn read as waiting" },
      );
      await client.beta.agents.sessions.events.create(sessionId, {
        events: [
          {
            type: "agent.session.input.tool_result",
            turn_id: action.turn_id,
            call_id: action.call_id,
            success: true,
            output: answer,
          } as never,
        ],
      });
    }
    if (event.type === "agent.session.idle") break;
  }
  return { turnId, ids };
}

describe("turns and items on the front door", () => {
  const stores = [
    ["memory", {}],
    ["Redis", { TETHER_STORE: "redis", TETHER_REDIS_URL: inject("redisUrl") }],
  ] as const;
  it.each(stores)(
    "lists turns from their records and items with the stream's ids, paged in both orders (%s)",
    async (_name, store) => {
      // Parked at once: the turn that waits for the client's call reads as waiting.
      server = await startWiredServer({
        ...store,
        TETHER_PROVIDER: "scripted-tools",
        TETHER_PARK_AFTER_MS: "0",
      });
      const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "k", maxRetries: 0 });
      const agent = await client.beta.agents.create({
        model: "gpt-test",
        tools: [
          {
            type: "function",
            name: "lookup",
            description: "looks up",
            parameters: { type: "object" },
          },
        ],
      });
      const session = await client.beta.agents.sessions.create({
        agent_id: agent.id,
        environment: { type: "none" },
      });
      const first = await turnOf(client, session.id, "hello there");
      const second = await turnOf(client, session.id, "/tool lookup {}", "sunny");

      const turns = client.beta.agents.sessions.turns;
      const newestFirst: string[] = [];
      for await (const turn of turns.list(session.id, { limit: 1 })) newestFirst.push(turn.id);
      expect(newestFirst).toEqual([second.turnId, first.turnId]);
      const oldestFirst: string[] = [];
      for await (const turn of turns.list(session.id, { limit: 1, order: "asc" })) {
        oldestFirst.push(turn.id);
      }
      expect(oldestFirst).toEqual([first.turnId, second.turnId]);

      const shown = await turns.retrieve(second.turnId, { session_id: session.id });
      expect(shown).toMatchObject({
        id: second.turnId,
        object: "agent.session.turn",
        session_id: session.id,
        agent_id: agent.id,
        subagent_id: null,
        status: "completed",
        error: null,
        usage: { total_tokens: expect.any(Number) as unknown },
      });
      expect(shown.started_at).toBeGreaterThanOrEqual(shown.created_at);
      expect(shown.completed_at).toBeGreaterThanOrEqual(shown.started_at ?? Infinity);

      // The items of one turn, page by page through last_id (ConversationCursorPage).
      const turnItems: string[] = [];
      const paged = turns.items.list(second.turnId, {
        session_id: session.id,
        limit: 1,
        order: "asc",
      });
      for await (const item of paged) turnItems.push(String(item.id));
      expect(turnItems).toEqual(second.ids);
      expect(turnItems).toEqual([
        expect.stringMatching(/^msg_/u),
        expect.stringMatching(/^fc_/u),
        expect.stringMatching(/^fco_/u),
        `msg_${second.turnId}_0`,
      ]);

      // The session's items: both turns, newest first by default, with the user's text.
      const all: { id: string; role?: string; content?: unknown }[] = [];
      for await (const item of client.beta.agents.sessions.items.list(session.id, { limit: 2 })) {
        all.push(item as unknown as { id: string });
      }
      expect(all.map((i) => i.id)).toEqual([...first.ids, ...second.ids].reverse());
      expect(all.find((i) => i.id === first.ids[0])).toMatchObject({
        role: "user",
        content: [{ type: "input_text", text: "hello there" }],
      });
    },
  );

  it("an unknown turn is a 404, a bad cursor a 400 naming after", async () => {
    server = await startWiredServer({});
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "k", maxRetries: 0 });
    const session = await client.beta.agents.sessions.create({
      agent: { model: "gpt-test" },
      environment: { type: "none" },
    });
    const missing = await client.beta.agents.sessions.turns
      .retrieve("turn-nope", { session_id: session.id })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("turn_not_found");
    const bad = await fetch(
      `${server.baseUrl}/v1/agents/sessions/${session.id}/turns?after=turn-nope`,
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: "after" } });
  });
});
