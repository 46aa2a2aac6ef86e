// Sessions on the OpenAI Agents API front door (ADR 0037), driven by the official Node SDK
// (`client.beta.agents.sessions`) and raw fetch where the framing matters: create with an inline
// agent or an agent id (the first input runs as a turn), retrieve, update (metadata replaces, agent
// fields pin a new version), list newest first with filters and auto-pagination, delete (409 while
// a turn waits), the state the AgentSession shows (in_progress, requires_action with its actions,
// idle with usage), the stubs for subagents and artifacts, and sessions made over gRPC.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import { startSessionDoor, type SessionDoor } from "./session-door.js";

let h: SessionDoor | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(options: Parameters<typeof startSessionDoor>[0] = {}) {
  h = await startSessionDoor(options);
  return h;
}

const lookup = {
  type: "function" as const,
  name: "lookup",
  description: "asks the client",
  parameters: { type: "object", properties: { q: { type: "string" } } },
};
const none = { type: "none" as const };

async function statusOf(door: SessionDoor, id: string, status: string) {
  let last = "";
  await waitFor(
    async () => {
      last = (await door.sdk.beta.agents.sessions.retrieve(id)).status;
      return last === status;
    },
    { what: `session ${id} to be ${status} (last ${last})` },
  );
  return door.sdk.beta.agents.sessions.retrieve(id);
}

describe("sessions through the official Node SDK", () => {
  it("creates a session with an inline agent whose input runs as the first turn", async () => {
    const door = await start();
    const created = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "gpt-test", instructions: "Be brief." },
      input: "hello",
      metadata: { team: "ops" },
    });
    expect(created.id).toMatch(/^sess_/u);
    expect(created).toMatchObject({
      object: "agent.session",
      environment: { type: "none" },
      metadata: { team: "ops" },
      required_actions: [],
      vault_ids: [],
      error: null,
      agent: { id: `inline_${created.id}`, model: "gpt-test", instructions: "Be brief." },
    });
    expect(created.created_at).toBeGreaterThan(1_700_000_000);
    const idle = await statusOf(door, created.id, "idle");
    // The turn ran and committed: the gRPC side sees its transcript and the door its usage.
    const { session } = await door.sessions.getSession({ sessionId: created.id });
    expect(session?.turnIndex).toBe(1n);
    expect(idle.usage).toMatchObject({
      input_tokens: expect.any(Number),
      total_tokens: expect.any(Number),
    });
    // The hidden agent is not an `agent_…` id: agents.list does not show it.
    const agents = await door.sdk.beta.agents.list();
    expect(agents.data).toEqual([]);
  });

  it("creates with agent_id, pinned to its latest version, and filters the list by it", async () => {
    const door = await start();
    const agent = await door.sdk.beta.agents.create({ model: "gpt-named", instructions: "Named." });
    const pinned = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent_id: agent.id,
    });
    const other = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "gpt-other" },
    });
    expect(pinned.agent).toMatchObject({ id: agent.id, model: "gpt-named" });
    const { session } = await door.sessions.getSession({ sessionId: pinned.id });
    expect(session?.agent).toMatchObject({ agentId: agent.id, version: 1n });

    const byAgent = await door.sdk.beta.agents.sessions.list({ agent_id: agent.id });
    expect(byAgent.data.map((s) => s.id)).toEqual([pinned.id]);
    const all = await door.sdk.beta.agents.sessions.list();
    expect(all.data.map((s) => s.id)).toEqual([other.id, pinned.id]);
  });

  it("updates metadata by replacing it and agent fields by pinning a new version", async () => {
    const door = await start();
    const created = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "gpt-a", instructions: "Keep me." },
      metadata: { a: "1", b: "2" },
    });
    const updated = await door.sdk.beta.agents.sessions.update(created.id, {
      metadata: { c: "3" },
      agent: { model: "gpt-b" },
    });
    expect(updated.metadata).toEqual({ c: "3" });
    expect(updated.agent).toMatchObject({ model: "gpt-b", instructions: "Keep me." });
    const { session } = await door.sessions.getSession({ sessionId: created.id });
    expect(session?.agent).toMatchObject({ agentId: `inline_${created.id}`, version: 2n });
    expect(await door.sdk.beta.agents.sessions.retrieve(created.id)).toEqual(updated);
  });

  it("lists newest first, pages with auto-pagination in both orders and filters by metadata", async () => {
    const door = await start();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const s = await door.sdk.beta.agents.sessions.create({
        environment: none,
        agent: { model: "gpt-test" },
        metadata: { parity: i % 2 === 0 ? "even" : "odd" },
      });
      ids.push(s.id);
    }
    const newestFirst = [...ids].reverse();
    const first = await door.sdk.beta.agents.sessions.list({ limit: 2 });
    expect(first.data.map((s) => s.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.has_more).toBe(true);
    const seen: string[] = [];
    for await (const s of door.sdk.beta.agents.sessions.list({ limit: 2 })) seen.push(s.id);
    expect(seen).toEqual(newestFirst);
    const asc: string[] = [];
    for await (const s of door.sdk.beta.agents.sessions.list({ limit: 2, order: "asc" })) {
      asc.push(s.id);
    }
    expect(asc).toEqual(ids);
    const even: string[] = [];
    for await (const s of door.sdk.beta.agents.sessions.list({
      limit: 1,
      metadata: { parity: "even" },
    })) {
      even.push(s.id);
    }
    expect(even).toEqual([ids[4], ids[2], ids[0]]);
  });

  it("shows a parked client call as requires_action, refuses delete with 409 until it is cancelled", async () => {
    const door = await start();
    const created = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "gpt-test", tools: [lookup] },
      input: "use lookup",
    });
    const waiting = await statusOf(door, created.id, "requires_action");
    expect(waiting.required_actions).toEqual([
      {
        type: "function_call",
        call_id: "call-1",
        name: "lookup",
        arguments: { q: "x" },
        turn_id: expect.any(String),
      },
    ]);

    await expect(door.sdk.beta.agents.sessions.delete(created.id)).rejects.toBeInstanceOf(
      OpenAI.ConflictError,
    );
    const raw = await fetch(`${door.server.baseUrl}/v1/agents/sessions/${created.id}`, {
      method: "DELETE",
    });
    expect(raw.status).toBe(409);
    expect(raw.headers.get("x-should-retry")).toBe("false");

    await door.turns.cancelTurn({ sessionId: created.id });
    await statusOf(door, created.id, "idle");
    expect(await door.sdk.beta.agents.sessions.delete(created.id)).toEqual({
      id: created.id,
      object: "agent.session.deleted",
      deleted: true,
    });
    await expect(door.sdk.beta.agents.sessions.retrieve(created.id)).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    // Its hidden inline agent went with it.
    await expect(door.sdk.beta.agents.retrieve(`inline_${created.id}`)).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it("shows a running turn as in_progress and refuses its delete with 409 until it is cancelled", async () => {
    const door = await start();
    const created = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "gpt-test" },
      input: "hang",
    });
    const running = await statusOf(door, created.id, "in_progress");
    expect(running.required_actions).toEqual([]);
    const error: unknown = await door.sdk.beta.agents.sessions
      .delete(created.id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.ConflictError);
    expect((error as InstanceType<typeof OpenAI.ConflictError>).headers.get("x-should-retry")).toBe(
      "false",
    );
    await door.turns.cancelTurn({ sessionId: created.id });
    await statusOf(door, created.id, "idle");
    await door.sdk.beta.agents.sessions.delete(created.id);
  });

  it("shows an approval a parked turn waits for as an mcp_approval_request", async () => {
    const door = await start({ approvalRequiredTools: ["lookup"] });
    const created = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "gpt-test", tools: [lookup] },
      input: [{ role: "user", content: [{ type: "input_text", text: "use lookup" }] }],
    });
    const waiting = await statusOf(door, created.id, "requires_action");
    expect(waiting.required_actions).toEqual([
      {
        type: "mcp_approval_request",
        request_id: "call-1",
        turn_id: expect.any(String),
        request: {
          type: "mcp_tool_call",
          name: "lookup",
          arguments: '{"q":"x"}',
          server_label: "client",
          message: expect.any(String),
        },
      },
    ]);
  });

  it("keeps each tenant's sessions, and their inline agents, to itself", async () => {
    const door = await start({ env: { TETHER_API_KEYS: "key-a=tenantA,key-b=tenantB" } });
    const as = (apiKey: string) =>
      new OpenAI({ baseURL: `${door.server.baseUrl}/v1`, apiKey, maxRetries: 0 });
    const mine = await as("key-a").beta.agents.sessions.create({
      environment: none,
      agent: { model: "m" },
    });
    for (const attempt of [
      () => as("key-b").beta.agents.sessions.retrieve(mine.id),
      () => as("key-b").beta.agents.sessions.update(mine.id, { metadata: { x: "1" } }),
      () => as("key-b").beta.agents.sessions.delete(mine.id),
      () => as("key-b").beta.agents.sessions.subagents.list(mine.id),
      () => as("key-b").beta.agents.retrieve(`inline_${mine.id}`),
    ]) {
      await expect(attempt()).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    }
    expect((await as("key-b").beta.agents.sessions.list()).data).toEqual([]);
    expect((await as("key-a").beta.agents.sessions.retrieve(mine.id)).metadata).toEqual({});
  });

  it("serves a session made over gRPC under its own id", async () => {
    const door = await start();
    await door.sessions.createSession({ sessionId: "grpc-made", metadata: { from: "grpc" } });
    const got = await door.sdk.beta.agents.sessions.retrieve("grpc-made");
    expect(got).toMatchObject({
      id: "grpc-made",
      status: "idle",
      metadata: { from: "grpc" },
      agent: null,
    });
    const updated = await door.sdk.beta.agents.sessions.update("grpc-made", {
      metadata: { to: "door" },
    });
    expect(updated.metadata).toEqual({ to: "door" });
    // The list shows the sessions whose order it knows: the door's `sess_…` ids.
    expect((await door.sdk.beta.agents.sessions.list()).data).toEqual([]);
  });
});

describe("what sessions refuse, by name", () => {
  const refusals: [string, Record<string, unknown>][] = [
    ["environment.type", { environment: { type: "openai_hosted" }, agent: { model: "m" } }],
    ["vault_ids", { environment: none, agent: { model: "m" }, vault_ids: ["vault_1"] }],
    [
      "agent.multi_agent.enabled",
      { environment: none, agent: { model: "m", multi_agent: { enabled: true } } },
    ],
    ["agent.model", { environment: none, agent: { instructions: "no model" } }],
    ["agent_id", { environment: none }],
    [
      "metadata.tether.x",
      { environment: none, agent: { model: "m" }, metadata: { "tether.x": "1" } },
    ],
    [
      "agent.tools[0].type",
      { environment: none, agent: { model: "m", tools: [{ type: "web_search" }] } },
    ],
    [
      "prompt_cache_options",
      { environment: none, agent: { model: "m" }, prompt_cache_options: { ttl: "30m" } },
    ],
  ];
  it.each(refusals)("refuses %s with the SDK's BadRequestError naming it", async (param, body) => {
    const door = await start();
    const error: unknown = await door.sdk.beta.agents.sessions
      .create(body as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
    // Nothing was stored.
    expect((await door.sdk.beta.agents.sessions.list()).data).toEqual([]);
  });

  it("refuses 17 metadata pairs and names metadata", async () => {
    const door = await start();
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    const error: unknown = await door.sdk.beta.agents.sessions
      .create({ environment: none, agent: { model: "m" }, metadata })
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("metadata");
  });
});

describe("subagents and artifacts tell the truth", () => {
  it("lists none and finds none, for a session that exists; 404 for one that does not", async () => {
    const door = await start();
    const s = await door.sdk.beta.agents.sessions.create({
      environment: none,
      agent: { model: "m" },
    });
    const subagents = await door.sdk.beta.agents.sessions.subagents.list(s.id);
    expect(subagents.data).toEqual([]);
    expect(subagents.has_more).toBe(false);
    const artifacts = await door.sdk.beta.agents.sessions.artifacts.list(s.id);
    expect(artifacts.data).toEqual([]);
    await expect(
      door.sdk.beta.agents.sessions.subagents.retrieve("sub_1", { session_id: s.id }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      door.sdk.beta.agents.sessions.artifacts.retrieve("art_1", { session_id: s.id }),
    ).rejects.toMatchObject({ status: 404, code: "item_not_found" });
    await expect(
      door.sdk.beta.agents.sessions.subagents.list("sess_missing"),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const raw = await fetch(`${door.server.baseUrl}/v1/agents/sessions/${s.id}/artifacts?limit=1`);
    expect(raw.headers.get("content-type")).toBe("application/json");
    expect(await raw.json()).toEqual({
      object: "list",
      data: [],
      first_id: null,
      last_id: null,
      has_more: false,
    });
  });
});
