// `Idempotency-Key` on the door's automation POSTs (ADR 0037, "Idempotency-Key on creates"): a
// create retried under its key answers the automation its first attempt made (one automation); a
// manual invocation retried under its key answers the same invocation as it is now (queued, then
// completed) and fires once; another body under the key is 422 source_key_conflict. Over raw HTTP
// across two replicas on one Redis (their real schedule pollers fire), and through the official
// Node SDK behind a proxy that loses the first answer of each POST.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it, inject } from "vitest";
import {
  startAnswerLosingProxy,
  type AnswerLosingProxy,
} from "../../support/answer-losing-proxy.js";
import { waitFor } from "../../support/wait-for.js";
import { startAutomationDoor, type AutomationDoor } from "./automation-door.js";
import { startEventsDoor, type EventsDoor } from "./events-in-support.js";

const doors: EventsDoor[] = [];
let proxy: AnswerLosingProxy | undefined;
let clocked: AutomationDoor | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await clocked?.close();
  clocked = undefined;
  for (const d of doors.splice(0)) await d.wired.close();
});

const run = Date.now().toString(36);

async function start(env: Record<string, string> = {}) {
  const d = await startEventsDoor(env);
  doors.push(d);
  return d;
}

const onRedis = (owner: string) => ({
  TETHER_STORE: "redis",
  TETHER_REDIS_URL: inject("redisUrl"),
  TETHER_OWNER_ID: `${owner}-${run}`,
});

type Answer = { status: number; body: Record<string, unknown> };

async function post(
  d: EventsDoor,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${d.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text === "" ? {} : JSON.parse(text)) as Answer["body"] };
}

async function list(d: EventsDoor, path: string) {
  const res = await fetch(`${d.baseUrl}${path}`, { headers: { authorization: "Bearer k" } });
  return ((await res.json()) as { data: Record<string, unknown>[] }).data;
}

async function sessionOf(d: EventsDoor): Promise<string> {
  const made = await post(d, "/v1/agents/sessions", {
    environment: { type: "none" },
    agent: { model: "gpt-test" },
  });
  expect(made.status).toBe(200);
  return String(made.body.id);
}

const periodic = (sessionId: string, name = "keyed") => ({
  type: "periodic",
  name,
  expression: "0 0 1 1 *",
  timezone: "UTC",
  target: { type: "existing_session", session_id: sessionId, instructions: "ping" },
});

describe("POST /v1/agents/automations under an Idempotency-Key", () => {
  it("a retry on either replica answers the first automation; another body is 422; one automation", async () => {
    const a = await start(onRedis("auto-key-a"));
    const b = await start(onRedis("auto-key-b"));
    const sessionId = await sessionOf(a);
    const key = { "Idempotency-Key": `auto-create-${run}` };
    const first = await post(a, "/v1/agents/automations", periodic(sessionId), key);
    expect(first.status).toBe(200);
    expect(String(first.body.id)).toMatch(/^auto_/u);
    expect(await post(b, "/v1/agents/automations", periodic(sessionId), key)).toEqual(first);
    expect(await post(a, "/v1/agents/automations", periodic(sessionId), key)).toEqual(first);
    const other = await post(b, "/v1/agents/automations", periodic(sessionId, "other"), key);
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "source_key_conflict" });
    const listed = await list(b, `/v1/agents/automations?session_id=${sessionId}`);
    expect(listed.map((x) => x.id)).toEqual([first.body.id]);
  });
});

describe("POST …/invocations under an Idempotency-Key", () => {
  it("a retry while queued and after the fire answers the same invocation as it is now; it fires once", async () => {
    const a = await start(onRedis("inv-key-a"));
    const b = await start(onRedis("inv-key-b"));
    const sessionId = await sessionOf(a);
    const auto = await post(a, "/v1/agents/automations", periodic(sessionId));
    const path = `/v1/agents/automations/${String(auto.body.id)}/invocations`;
    const key = { "Idempotency-Key": `auto-invoke-${run}` };
    const first = await post(a, path, {}, key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ source: { type: "manual" } });
    const id = String(first.body.id);
    // The other replica answers the same invocation (queued, or completed if the poller was quick).
    const again = await post(b, path, {}, key);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(id);
    await waitFor(
      async () => (await list(a, path)).some((inv) => inv.id === id && inv.status === "completed"),
      { what: "the keyed manual invocation to complete" },
    );
    // After the fire: the same id, as it is now; nothing is asked again.
    const late = await post(b, path, {}, key);
    expect(late.body).toMatchObject({ id, status: "completed" });
    expect((await list(a, path)).map((inv) => inv.id)).toEqual([id]);
    const other = await post(a, path, { note: "other" }, key);
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "source_key_conflict" });
    // The key is the automation's: the same key on another automation is another request.
    const auto2 = await post(a, "/v1/agents/automations", periodic(sessionId, "second"));
    const elsewhere = await post(
      a,
      `/v1/agents/automations/${String(auto2.body.id)}/invocations`,
      {},
      key,
    );
    expect(elsewhere.status).toBe(422);
  });
});

describe("keyed manual invocations on a manual clock, the poller driven by hand", () => {
  it("a key joins the invocation already queued; after its fire a new key is a new invocation", async () => {
    const h = (clocked = await startAutomationDoor());
    const agent = await h.sdk.beta.agents.create({ model: "echo" });
    const session = await h.sdk.beta.agents.sessions.create({
      agent_id: agent.id,
      environment: { type: "none" },
    });
    const auto = await h.sdk.beta.agents.automations.create({
      type: "periodic",
      name: "clocked",
      expression: "0 0 1 1 *",
      timezone: "UTC",
      target: { type: "existing_session", session_id: session.id, instructions: "ping" },
    });
    const { invocations } = h.sdk.beta.agents.automations;
    const key = (k: string) => ({ headers: { "Idempotency-Key": `${k}-${run}` } });
    const unkeyed = await invocations.create(auto.id);
    const joined = await invocations.create(auto.id, key("join"));
    expect(joined).toEqual(unkeyed);
    await h.poll();
    const fired = await invocations.create(auto.id, key("join"));
    expect(fired).toMatchObject({ id: unkeyed.id, status: "completed" });
    // The same instant on the clock: the next key still names an invocation of its own.
    const next = await invocations.create(auto.id, key("next"));
    expect(next.id).not.toBe(unkeyed.id);
    expect(next.status).toBe("queued");
    // Its instant is a millisecond past the last fire's: due once the clock has reached it.
    h.clock.advance(1_000);
    await h.poll();
    expect(await invocations.create(auto.id, key("next"))).toMatchObject({
      id: next.id,
      status: "completed",
    });
    const ids = (await invocations.list(auto.id)).data.map((i) => i.id);
    expect(ids).toEqual([next.id, unkeyed.id]);
  });
});

describe("the Node SDK behind a proxy that loses the first answer of each POST", () => {
  it("automations.create and invocations.create each end with one automation and one fire", async () => {
    const d = await start();
    proxy = await startAnswerLosingProxy(d.baseUrl);
    const sdk = new OpenAI({ baseURL: `${proxy.baseUrl}/v1`, apiKey: "k", maxRetries: 2 });
    const sessionId = await sessionOf(d);
    const auto = await sdk.beta.agents.automations.create(
      {
        type: "periodic",
        name: "lossy",
        expression: "0 0 1 1 *",
        timezone: "UTC",
        target: { type: "existing_session", session_id: sessionId, instructions: "ping" },
      },
      { headers: { "Idempotency-Key": `lost-auto-${run}` } },
    );
    const inv = await sdk.beta.agents.automations.invocations.create(auto.id, {
      headers: { "Idempotency-Key": `lost-invoke-${run}` },
    });
    expect(proxy.lost()).toBe(2);
    expect(proxy.forwarded.filter((r) => r === "POST /v1/agents/automations")).toHaveLength(2);
    const listed = await list(d, `/v1/agents/automations?session_id=${sessionId}`);
    expect(listed.map((x) => x.id)).toEqual([auto.id]);
    const path = `/v1/agents/automations/${auto.id}/invocations`;
    await waitFor(
      async () => (await list(d, path)).some((x) => x.id === inv.id && x.status === "completed"),
      { what: "the manual invocation to complete" },
    );
    expect((await list(d, path)).map((x) => x.id)).toEqual([inv.id]);
  });
});
