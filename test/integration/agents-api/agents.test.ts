// The OpenAI Agents API front door (ADR 0037) driven by the official `openai` Node SDK (7.60.0,
// installed as `openai-agents-sdk`): agent create, retrieve, update, list with auto-pagination and
// delete against the real server on its one port, the SDK's error classes for 400, 401 and 404,
// and an agent made over HTTP read back over gRPC.
import { createClient } from "@connectrpc/connect";
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { startDoorServer, type DoorServer } from "./door-server.js";

let h: DoorServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(env: Record<string, string> = {}) {
  h = await startDoorServer(env);
  return h;
}

const sdk = (harness: DoorServer, apiKey = "any-key") =>
  new OpenAI({ baseURL: `${harness.baseUrl}/v1`, apiKey, maxRetries: 0 });

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "the weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("agents through the official Node SDK", () => {
  it("creates, retrieves, updates (null clears, tools and metadata replace) and deletes an agent", async () => {
    const client = sdk(await start());
    const created = await client.beta.agents.create({
      model: "gpt-test",
      name: "forecaster",
      instructions: "Answer about the weather.",
      metadata: { team: "ops", tier: "gold" },
      tools: [weather],
      text: { format: { type: "json_schema", schema: { type: "object" } }, verbosity: "low" },
      reasoning: { effort: "high" },
      service_tier: "flex",
    });
    expect(created.id).toMatch(/^agent_/u);
    expect(created).toMatchObject({
      object: "agent",
      model: "gpt-test",
      name: "forecaster",
      instructions: "Answer about the weather.",
      metadata: { team: "ops", tier: "gold" },
      tools: [{ type: "function", name: "get_weather", parameters: weather.parameters }],
      text: { format: { type: "json_schema", schema: { type: "object" } }, verbosity: "low" },
      reasoning: { effort: "high", summary: null },
      service_tier: "flex",
      multi_agent: { enabled: false, max_concurrent_subagents: null },
    });
    expect(created.created_at).toBe(created.updated_at);

    expect(await client.beta.agents.retrieve(created.id)).toEqual(created);

    h!.storeClock.advance(5_000);
    const updated = await client.beta.agents.update(created.id, {
      instructions: null,
      metadata: { team: "infra" },
      tools: [],
      text: null,
    });
    expect(updated).toMatchObject({
      id: created.id,
      model: "gpt-test",
      name: "forecaster",
      instructions: null,
      metadata: { team: "infra" },
      tools: [],
      // A cleared setting shows OpenAI's default.
      text: { format: { type: "text" }, verbosity: "medium" },
      reasoning: { effort: "high" },
      created_at: created.created_at,
    });
    expect(updated.updated_at).toBe(created.updated_at + 5);

    const verbose = await client.beta.agents.update(created.id, {
      text: { format: { type: "json_schema", schema: { type: "object" } } },
    });
    const louder = await client.beta.agents.update(created.id, { text: { verbosity: "high" } });
    expect(louder.text).toEqual({ ...verbose.text, verbosity: "high" });
    expect(louder.text.format.type).toBe("json_schema");

    const deleted = await client.beta.agents.delete(created.id);
    expect(deleted).toEqual({ id: created.id, object: "agent.deleted", deleted: true });
    await expect(client.beta.agents.retrieve(created.id)).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it("lists newest first by default and pages across pages with auto-pagination, both orders", async () => {
    const client = sdk(await start());
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) {
      ids.push((await client.beta.agents.create({ model: "m", name: `a${i}` })).id);
    }
    const newestFirst = [...ids].reverse();

    const first = await client.beta.agents.list({ limit: 3 });
    expect(first.data.map((a) => a.id)).toEqual(newestFirst.slice(0, 3));
    expect(first.has_more).toBe(true);

    const seen: string[] = [];
    for await (const agent of client.beta.agents.list({ limit: 3 })) seen.push(agent.id);
    expect(seen).toEqual(newestFirst);

    const ascending: string[] = [];
    for await (const agent of client.beta.agents.list({ limit: 2, order: "asc" })) {
      ascending.push(agent.id);
    }
    expect(ascending).toEqual(ids);
  });

  it("throws the SDK's BadRequestError naming the refused field in param", async () => {
    const client = sdk(await start());
    const refused = await client.beta.agents
      .create({
        model: "m",
        tools: [weather, { ...weather, name: "other" }, { type: "web_search" } as never],
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("tools[2].type");

    const mcp = await client.beta.agents
      .create({ model: "m", tools: [{ type: "mcp", server_label: "nowhere" } as never] })
      .catch((error: unknown) => error);
    expect(mcp).toBeInstanceOf(OpenAI.BadRequestError);
    expect((mcp as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(
      "tools[0].server_label",
    );

    const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    const labels = await client.beta.agents
      .create({ model: "m", metadata: tooMany })
      .catch((error: unknown) => error);
    expect((labels as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("metadata");

    const { id } = await client.beta.agents.create({ model: "m" });
    const cleared = await client.beta.agents
      .update(id, { model: null as never })
      .catch((error: unknown) => error);
    expect((cleared as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("model");
  });

  it("maps bearer keys to tenants as TETHER_API_KEYS does for gRPC", async () => {
    const harness = await start({ TETHER_API_KEYS: "key-a=tenantA,key-b=tenantB" });
    await expect(sdk(harness, "wrong").beta.agents.list()).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    const mine = await sdk(harness, "key-a").beta.agents.create({ model: "m" });
    // Another tenant's agent is simply not found, and not listed.
    await expect(sdk(harness, "key-b").beta.agents.retrieve(mine.id)).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    expect((await sdk(harness, "key-b").beta.agents.list()).data).toEqual([]);
    expect((await sdk(harness, "key-a").beta.agents.list()).data.map((a) => a.id)).toEqual([
      mine.id,
    ]);
  });

  it("serves gRPC on the same port: an agent made over HTTP is read back by AgentService", async () => {
    const harness = await start();
    const made = await sdk(harness).beta.agents.create({
      model: "m",
      instructions: "sys",
      tools: [weather],
    });
    const grpc = createClient(AgentService, harness.transport);
    const { agent } = await grpc.getAgent({ agentId: made.id });
    expect(agent?.definition?.model).toBe("m");
    expect(agent?.definition?.systemPrompt).toBe("sys");
    expect(agent?.definition?.clientTools.map((t) => t.name)).toEqual(["get_weather"]);
  });

  it("keeps what the Agent object does not show when the door updates a gRPC-made agent", async () => {
    const harness = await start();
    const grpc = createClient(AgentService, harness.transport);
    await grpc.createAgent({
      agentId: "made-over-grpc",
      displayName: "old",
      definition: { model: "m", systemPrompt: "sys", temperature: 0.5, maxIterations: 7 },
    });
    const updated = await sdk(harness).beta.agents.update("made-over-grpc", { name: "new" });
    expect(updated).toMatchObject({ id: "made-over-grpc", name: "new", instructions: "sys" });
    const { agent } = await grpc.getAgent({ agentId: "made-over-grpc" });
    expect(agent?.version).toBe(2n);
    expect(agent?.definition?.temperature).toBe(0.5);
    expect(agent?.definition?.maxIterations).toBe(7);
  });
});
