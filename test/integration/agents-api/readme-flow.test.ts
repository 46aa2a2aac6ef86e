// The README's SDK example of the front door, as a newcomer would run it: an agent, a session made
// on the door, its event stream opened before the input is posted (as the SDK helpers do), a
// message under an Idempotency-Key, and the answer's text deltas up to the session's idle.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

let server: WiredServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the README's front-door example", () => {
  it("an agent, a door session, its stream, a keyed message: the text arrives and the session goes idle", async () => {
    server = await startWiredServer({});
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "any-key" });
    const agent = await client.beta.agents.create({
      model: "gpt-4.1-mini",
      instructions: "Answer about the weather.",
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "The weather in a city.",
          parameters: { type: "object" },
        },
      ],
    });
    const session = await client.beta.agents.sessions.create({
      agent_id: agent.id,
      environment: { type: "none" },
    });
    expect(session.id).toMatch(/^sess_/u);
    const events = await client.beta.agents.sessions.events.stream(session.id);
    const message = {
      events: [
        {
          type: "agent.session.input.message" as const,
          input: [
            { role: "user" as const, content: [{ type: "input_text" as const, text: "Oslo?" }] },
          ],
        },
      ],
    };
    const keyed = { headers: { "Idempotency-Key": "oslo-1" } };
    await client.beta.agents.sessions.events.create(session.id, message, keyed);
    // The SDK's retry of the same post: one input, one turn.
    await client.beta.agents.sessions.events.create(session.id, message, keyed);
    let text = "";
    const types: string[] = [];
    for await (const event of events) {
      types.push(event.type);
      if (event.type === "agent.session.turn.output_text.delta") text += event.delta;
      if (event.type === "agent.session.idle") break;
    }
    // The scripted default provider echoes the input.
    expect(text).toBe("Oslo?");
    expect(types.filter((t) => t === "agent.session.turn.created")).toHaveLength(1);
    expect(types.at(-2)).toBe("agent.session.turn.completed");
    const shown = await client.beta.agents.sessions.retrieve(session.id);
    expect(shown.status).toBe("idle");
  });
});
