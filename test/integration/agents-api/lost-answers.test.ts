// A POST whose answer is lost after the door committed it (ADR 0037, "Idempotency-Key on
// creates"): the official Node SDK (maxRetries 2) talks to the door through a proxy that forwards
// each first POST and answers it 500; the SDK retries with the same Idempotency-Key header and
// gets the first answer. sessions.create with input, agents.create and sessions.events.create each
// end with exactly one session, agent or input, read back from the door itself and over gRPC.
import { createClient } from "@connectrpc/connect";
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import {
  startAnswerLosingProxy,
  type AnswerLosingProxy,
} from "../../support/answer-losing-proxy.js";
import {
  finishedText,
  startEventsDoor,
  userMessage,
  watchSession,
  type EventsDoor,
  type SessionWatch,
} from "./events-in-support.js";

let door: EventsDoor | undefined;
let proxy: AnswerLosingProxy | undefined;
const watches: SessionWatch[] = [];
afterEach(async () => {
  for (const w of watches.splice(0)) w.stop();
  await proxy?.close();
  await door?.wired.close();
  proxy = undefined;
  door = undefined;
});

async function start() {
  door = await startEventsDoor();
  proxy = await startAnswerLosingProxy(door.baseUrl);
  const sdk = new OpenAI({ baseURL: `${proxy.baseUrl}/v1`, apiKey: "k", maxRetries: 2 });
  return { d: door, p: proxy, sdk };
}

/** GET from the door itself (not through the proxy): the ids of a list. */
async function idsOf(d: EventsDoor, path: string): Promise<string[]> {
  const res = await fetch(`${d.baseUrl}${path}`, { headers: { authorization: "Bearer k" } });
  return ((await res.json()) as { data: { id: string }[] }).data.map((o) => o.id);
}

function watch(d: EventsDoor, sessionId: string) {
  const w = watchSession(d.transport, sessionId);
  watches.push(w);
  return w;
}

/** The turns started before `event`, each with how many inputs it took. */
function turnsBefore(w: SessionWatch, cursor: bigint): number[] {
  return w.events
    .filter((e) => e.cursor < cursor && e.event.case === "turnStarted")
    .map((e) => (e.event.case === "turnStarted" ? e.event.value.inputIds.length : 0));
}

describe("a POST answered 500 after the door committed it, retried by the Node SDK", () => {
  it("sessions.create with input under an Idempotency-Key: one session, one input, one turn", async () => {
    const { d, p, sdk } = await start();
    const created = await sdk.beta.agents.sessions.create(
      { environment: { type: "none" }, agent: { model: "gpt-test" }, input: "just once" },
      { headers: { "Idempotency-Key": "lost-create-1" } },
    );
    expect(p.lost()).toBe(1);
    expect(p.forwarded.filter((r) => r === "POST /v1/agents/sessions")).toHaveLength(2);
    expect(await idsOf(d, "/v1/agents/sessions")).toEqual([created.id]);
    const w = watch(d, created.id);
    expect(finishedText(await w.next("turnCompleted"))).toBe("just once");
    // Straight to the door: a later turn shows the log has caught up.
    await d.post(created.id, { events: [userMessage("after")] });
    const after = await w.next("turnCompleted", (e) => finishedText(e) === "after");
    expect(turnsBefore(w, after.cursor)).toEqual([1, 1]);
    const open = await createClient(QueueService, d.transport).listInputs({
      sessionId: created.id,
    });
    expect(open.inputs).toEqual([]);
  });

  it("agents.create under an Idempotency-Key: one agent (without a key the same loss makes two)", async () => {
    const { d, sdk } = await start();
    const body = { name: "once", model: "gpt-test" };
    const created = await sdk.beta.agents.create(body, {
      headers: { "Idempotency-Key": "lost-agent-1" },
    });
    expect(await idsOf(d, "/v1/agents")).toEqual([created.id]);
    // The hazard the key removes: the lost answer's agent and the retry's.
    const unkeyed = await sdk.beta.agents.create(body);
    const ids = await idsOf(d, "/v1/agents");
    expect(ids).toHaveLength(3);
    expect(ids).toContain(unkeyed.id);
  });

  it("sessions.events.create with its Idempotency-Key: one input, one turn", async () => {
    const { d, p, sdk } = await start();
    const session = await sdk.beta.agents.sessions.create(
      { environment: { type: "none" }, agent: { model: "gpt-test" } },
      { headers: { "Idempotency-Key": "lost-events-session" } },
    );
    const w = watch(d, session.id);
    await sdk.beta.agents.sessions.events.create(session.id, {
      events: [userMessage("one message")],
      "Idempotency-Key": "lost-event-1",
    });
    expect(p.forwarded.filter((r) => r.endsWith("/events"))).toHaveLength(2);
    await w.next("turnCompleted", (e) => finishedText(e) === "one message");
    // Straight to the door: a later turn shows the log has caught up.
    await d.post(session.id, { events: [userMessage("after")] });
    const after = await w.next("turnCompleted", (e) => finishedText(e) === "after");
    expect(turnsBefore(w, after.cursor)).toEqual([1, 1]);
    expect(await idsOf(d, "/v1/agents/sessions")).toEqual([session.id]);
  });
});
