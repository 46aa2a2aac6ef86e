// `Idempotency-Key` on the door's creates (ADR 0037, "Idempotency-Key on creates"), over raw HTTP
// against the real server: POST /v1/agents and POST /v1/agents/sessions retried under their key
// answer the first answer (same body, 200) and make nothing more; another body under the key is
// 422; a key is the tenant's own; across two replicas on one Redis and on a server started after
// the first is gone, the retry still finds the first object.
import { createClient } from "@connectrpc/connect";
import { afterEach, describe, expect, it, inject } from "vitest";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import {
  finishedText,
  startEventsDoor,
  userMessage,
  watchSession,
  type EventsDoor,
  type SessionWatch,
} from "./events-in-support.js";
import { requestHashOf } from "../../../src/agents-api/idempotent-create.js";

const doors: EventsDoor[] = [];
const watches: SessionWatch[] = [];
afterEach(async () => {
  for (const w of watches.splice(0)) w.stop();
  for (const d of doors.splice(0)) await d.wired.close();
});

async function start(env: Record<string, string> = {}) {
  const d = await startEventsDoor(env);
  doors.push(d);
  return d;
}

const run = Date.now().toString(36);

/** A POST with a JSON body; the answer's status and parsed body. */
async function post(
  d: EventsDoor,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  bearer = "k",
) {
  const res = await fetch(`${d.baseUrl}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${bearer}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>,
  };
}

/** The agent's latest version number, as AgentService tells it. */
async function latestVersion(d: EventsDoor, agentId: string): Promise<bigint | undefined> {
  const agents = createClient(AgentService, d.wired.as("k"));
  return (await agents.getAgent({ agentId })).agent?.version;
}

async function list(d: EventsDoor, path: string) {
  const res = await fetch(`${d.baseUrl}${path}`, { headers: { authorization: "Bearer k" } });
  return ((await res.json()) as { data: { id: string }[] }).data;
}

const agentBody = { name: "keyed", model: "gpt-test", instructions: "Be brief." };
const sessionBody = (input?: string, team = "ops") => ({
  environment: { type: "none" },
  agent: { model: "gpt-test" },
  metadata: { team, run },
  ...(input !== undefined && { input }),
});

describe("POST /v1/agents under an Idempotency-Key", () => {
  it("a retry answers the first answer and makes no second agent; another body is 422", async () => {
    const d = await start();
    const key = { "Idempotency-Key": "agent-key-1" };
    const first = await post(d, "/v1/agents", agentBody, key);
    expect(first.status).toBe(200);
    // The same body with its keys in another order is the same request.
    const reordered = { instructions: "Be brief.", model: "gpt-test", name: "keyed" };
    const again = await post(d, "/v1/agents", reordered, key);
    expect(again).toEqual(first);
    const other = await post(d, "/v1/agents", { ...agentBody, name: "other" }, key);
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({
      type: "invalid_request_error",
      code: "source_key_conflict",
    });
    expect((await list(d, "/v1/agents")).map((a) => a.id)).toEqual([first.body.id]);
    // Without a key, every create is a new agent.
    const plain = await post(d, "/v1/agents", agentBody);
    expect(plain.body.id).not.toBe(first.body.id);
  });

  it("a key that breaks the id rules is 400 naming Idempotency-Key, and nothing is made", async () => {
    const d = await start();
    for (const path of ["/v1/agents", "/v1/agents/sessions"]) {
      const body = path === "/v1/agents" ? agentBody : sessionBody();
      const bad = await post(d, path, body, { "Idempotency-Key": "{braces}" });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ param: "Idempotency-Key" });
    }
    expect(await list(d, "/v1/agents")).toEqual([]);
    expect(await list(d, "/v1/agents/sessions")).toEqual([]);
  });

  it("a key is the tenant's own: another tenant's same key and body is its own agent", async () => {
    const d = await start({ TETHER_API_KEYS: "ka=tenantA,kb=tenantB" });
    const key = { "Idempotency-Key": "shared-key" };
    const a = await post(d, "/v1/agents", agentBody, key, "ka");
    const b = await post(d, "/v1/agents", agentBody, key, "kb");
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.id).not.toBe(a.body.id);
    expect((await post(d, "/v1/agents", agentBody, key, "ka")).body.id).toBe(a.body.id);
  });
});

describe("POST /v1/agents/{id} (update) under an Idempotency-Key", () => {
  it("a retried update answers the version it made and makes no second one; another agent or body under the key is 422", async () => {
    const d = await start();
    const made = await post(d, "/v1/agents", agentBody);
    const id = String(made.body.id);
    const key = { "Idempotency-Key": "update-key-1" };
    const first = await post(d, `/v1/agents/${id}`, { instructions: "Be kind." }, key);
    expect(first.status).toBe(200);
    expect(first.body.instructions).toBe("Be kind.");
    expect(await post(d, `/v1/agents/${id}`, { instructions: "Be kind." }, key)).toEqual(first);
    // Two versions: the create's and the update's, whatever the retry did.
    expect(await latestVersion(d, id)).toBe(2n);
    const other = await post(d, `/v1/agents/${id}`, { instructions: "Be loud." }, key);
    expect([other.status, (other.body.error as { code: string }).code]).toEqual([
      422,
      "source_key_conflict",
    ]);
    const second = await post(d, "/v1/agents", { ...agentBody, name: "second" });
    const elsewhere = await post(
      d,
      `/v1/agents/${String(second.body.id)}`,
      { instructions: "Be kind." },
      key,
    );
    expect(elsewhere.status).toBe(422);
  });

  it("a retry after a newer update answers its own version; one whose first attempt lost its race is 409", async () => {
    const d = await start();
    const id = String((await post(d, "/v1/agents", agentBody)).body.id);
    const key = { "Idempotency-Key": "update-key-2" };
    const mine = await post(d, `/v1/agents/${id}`, { instructions: "v2" }, key);
    await post(d, `/v1/agents/${id}`, { instructions: "v3, someone else" });
    // The retry finds the version its first attempt made, not the latest, and adds none.
    const retried = await post(d, `/v1/agents/${id}`, { instructions: "v2" }, key);
    expect(retried).toEqual(mine);
    const latest = await fetch(`${d.baseUrl}/v1/agents/${id}`, {
      headers: { authorization: "Bearer k" },
    });
    expect(((await latest.json()) as { instructions: string }).instructions).toBe(
      "v3, someone else",
    );
    expect(await latestVersion(d, id)).toBe(3n);

    // A keyed update whose key was claimed for version 4 but another update made version 4 first
    // (the first attempt's write lost, or never ran): the retry must not call that one its own.
    const raced = { "Idempotency-Key": "update-key-3" };
    const keys = d.wired.built.idempotencyKeys;
    if (!keys) throw new Error("the wired server keeps keys in its backend");
    await keys.claimIdempotencyKey({
      tenant: "default",
      create: "agents.update",
      key: "update-key-3",
      requestHash: requestHashOf({ agent_id: id, body: { instructions: "v4, mine" } }),
      id: "4",
      ttlMs: 60_000,
    });
    await post(d, `/v1/agents/${id}`, { instructions: "v4, theirs" });
    const lost = await post(d, `/v1/agents/${id}`, { instructions: "v4, mine" }, raced);
    expect(lost.status).toBe(409);
    expect(lost.body.error).toMatchObject({ code: "agent_version_conflict" });
  });
});

describe("POST /v1/agents/sessions under an Idempotency-Key", () => {
  it("a retry of a create without input answers the identical session", async () => {
    const d = await start();
    const key = { "Idempotency-Key": "session-key-1" };
    const first = await post(d, "/v1/agents/sessions", sessionBody(), key);
    expect(first.status).toBe(200);
    expect(await post(d, "/v1/agents/sessions", sessionBody(), key)).toEqual(first);
    const other = await post(d, "/v1/agents/sessions", sessionBody(undefined, "dev"), key);
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "source_key_conflict" });
    expect((await list(d, "/v1/agents/sessions")).map((s) => s.id)).toEqual([first.body.id]);
  });

  it("a retry of a create with input is the same session, one input and one turn", async () => {
    const d = await start();
    const key = { "Idempotency-Key": "session-key-2" };
    const first = await post(d, "/v1/agents/sessions", sessionBody("only once"), key);
    const id = String(first.body.id);
    const w = watchSession(d.transport, id);
    watches.push(w);
    await w.next("turnCompleted");
    const again = await post(d, "/v1/agents/sessions", sessionBody("only once"), key);
    expect([again.status, again.body.id]).toEqual([200, id]);
    const inputs = await createClient(QueueService, d.transport).listInputs({ sessionId: id });
    // The first input ran and is settled; a second one would wait here for its turn.
    expect(inputs.inputs).toEqual([]);
    // A later turn proves the log has caught up.
    await post(d, `/v1/agents/sessions/${id}/events`, { events: [userMessage("after")] });
    const after = await w.next("turnCompleted", (e) => finishedText(e) === "after");
    const started = w.events.filter(
      (e) => e.cursor < after.cursor && e.event.case === "turnStarted",
    );
    // The create's turn and the later one, one input each: the retry started none.
    expect(
      started.map((e) => (e.event.case === "turnStarted" ? e.event.value.inputIds.length : 0)),
    ).toEqual([1, 1]);
    expect((await list(d, "/v1/agents/sessions")).map((s) => s.id)).toEqual([id]);
  });
});

describe("Idempotency-Key on creates in flight", () => {
  it("duplicates sent at once all answer 200 with one session, one input and one agent", async () => {
    const d = await start();
    const key = { "Idempotency-Key": "in-flight-1" };
    const sessions = await Promise.all(
      Array.from({ length: 4 }, () => post(d, "/v1/agents/sessions", sessionBody("at once"), key)),
    );
    const agents = await Promise.all(
      Array.from({ length: 4 }, () => post(d, "/v1/agents", agentBody, key)),
    );
    expect(sessions.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(sessions.map((r) => r.body.id)).size).toBe(1);
    expect(agents.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(agents.map((r) => JSON.stringify(r.body))).size).toBe(1);
    const id = String(sessions[0]?.body.id);
    expect((await list(d, "/v1/agents/sessions")).map((s) => s.id)).toEqual([id]);
    expect((await list(d, "/v1/agents")).map((a) => a.id)).toEqual([agents[0]?.body.id]);
    const w = watchSession(d.transport, id);
    watches.push(w);
    await w.next("turnCompleted", (e) => finishedText(e) === "at once");
    await post(d, `/v1/agents/sessions/${id}/events`, { events: [userMessage("after")] });
    const after = await w.next("turnCompleted", (e) => finishedText(e) === "after");
    const started = w.events.filter(
      (e) => e.cursor < after.cursor && e.event.case === "turnStarted",
    );
    expect(
      started.map((e) => (e.event.case === "turnStarted" ? e.event.value.inputIds.length : 0)),
    ).toEqual([1, 1]);
  });
});

describe("Idempotency-Key on creates across replicas and a restart", () => {
  it("the other replica, then a server started after the first is gone, answer the first object", async () => {
    const env = (owner: string) => ({
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: inject("redisUrl"),
      TETHER_OWNER_ID: `${owner}-${run}`,
    });
    const a = await start(env("idem-a"));
    const b = await start(env("idem-b"));
    const key = { "Idempotency-Key": `replicas-${run}` };
    const agent = await post(a, "/v1/agents", agentBody, key);
    const session = await post(a, "/v1/agents/sessions", sessionBody(), key);
    expect(await post(b, "/v1/agents", agentBody, key)).toEqual(agent);
    expect(await post(b, "/v1/agents/sessions", sessionBody(), key)).toEqual(session);
    expect((await post(b, "/v1/agents", { ...agentBody, name: "x" }, key)).status).toBe(422);

    // The first replica stops; a new server process on the same store takes the retries.
    await doors.splice(0, 1)[0]?.wired.close();
    const c = await start(env("idem-c"));
    expect(await post(c, "/v1/agents", agentBody, key)).toEqual(agent);
    expect(await post(c, "/v1/agents/sessions", sessionBody(), key)).toEqual(session);
    const sessions = await list(c, `/v1/agents/sessions?metadata[run]=${run}`);
    expect(sessions.map((s) => s.id)).toEqual([session.body.id]);
  });
});
