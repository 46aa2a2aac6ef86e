// The README's Node SDK example of automations, as written there (on the session of the example
// before it): a periodic automation created under an Idempotency-Key, a manual invocation, the
// invocations listed (the queued invocation's id, completed once the wired poller ran it), a pause.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

let server: WiredServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the README's automations example", () => {
  it("creates under a key, invokes, lists the invocation completed under its queued id, pauses", async () => {
    server = await startWiredServer({});
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "any-key" });
    const agent = await client.beta.agents.create({ model: "gpt-4.1-mini" });
    const session = await client.beta.agents.sessions.create({
      agent_id: agent.id,
      environment: { type: "none" },
    });
    const body = {
      type: "periodic" as const,
      name: "standup digest",
      expression: "30 8 * * 1-5",
      timezone: "Europe/Oslo",
      target: {
        type: "existing_session" as const,
        session_id: session.id,
        instructions: "Summarise yesterday.",
      },
    };
    const keyed = { headers: { "Idempotency-Key": "standup-digest-1" } };
    const digest = await client.beta.agents.automations.create(body, keyed);
    // The same create sent again under its key is the same automation.
    expect((await client.beta.agents.automations.create(body, keyed)).id).toBe(digest.id);
    const queued = await client.beta.agents.automations.invocations.create(digest.id);
    expect(queued.status).toBe("queued");
    const runs = await waitFor(
      async () => {
        const seen: { id: string; status: string }[] = [];
        for await (const run of client.beta.agents.automations.invocations.list(digest.id)) {
          seen.push({ id: run.id, status: run.status });
        }
        return seen.every((r) => r.status === "completed") ? seen : undefined;
      },
      { what: "the manual invocation to complete" },
    );
    expect(runs).toEqual([{ id: queued.id, status: "completed" }]);
    const paused = await client.beta.agents.automations.pause(digest.id);
    expect(paused.status).toBe("paused");
  });
});
