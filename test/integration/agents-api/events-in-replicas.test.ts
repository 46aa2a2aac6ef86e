// POST /v1/agents/sessions/{id}/events across replicas (ADR 0037, "Events in"): two servers on one
// Redis. A message retried with its Idempotency-Key on the other replica is the same input (also
// when a turn runs by then); a client tool call of a turn running on one replica is answered
// through the other's door.
import { afterEach, describe, expect, it, inject } from "vitest";
import {
  finishedText,
  startEventsDoor,
  startToolTurn,
  userMessage,
  watchSession,
  type EventsDoor,
  type SessionWatch,
} from "./events-in-support.js";

const doors: EventsDoor[] = [];
const watches: SessionWatch[] = [];
afterEach(async () => {
  for (const w of watches.splice(0)) w.stop();
  for (const d of doors.splice(0)) await d.wired.close();
});

const run = Date.now().toString(36);

async function replicas(): Promise<[EventsDoor, EventsDoor]> {
  const env = (owner: string) => ({
    TETHER_STORE: "redis",
    TETHER_REDIS_URL: inject("redisUrl"),
    TETHER_OWNER_ID: `${owner}-${run}`,
  });
  const a = await startEventsDoor(env("door-a"));
  doors.push(a);
  const b = await startEventsDoor(env("door-b"));
  doors.push(b);
  return [a, b];
}

function watch(d: EventsDoor, sessionId: string) {
  const w = watchSession(d.transport, sessionId);
  watches.push(w);
  return w;
}

describe("POST /v1/agents/sessions/{id}/events across replicas", () => {
  it("a message retried with its key on the other replica is one input and one turn", async () => {
    const [a, b] = await replicas();
    const sessionId = `replicas-idem-${run}`;
    const key = { "Idempotency-Key": `key-${run}` };
    expect((await a.post(sessionId, { events: [userMessage("once")] }, key)).status).toBe(202);
    const w = watch(a, sessionId);
    await w.next("turnCompleted");
    expect((await b.post(sessionId, { events: [userMessage("once")] }, key)).status).toBe(202);
    await b.sdk.beta.agents.sessions.events.create(sessionId, {
      events: [userMessage("once")],
      "Idempotency-Key": key["Idempotency-Key"],
    });
    const conflict = await b.post(sessionId, { events: [userMessage("twice")] }, key);
    expect(conflict.status).toBe(422);

    await b.post(sessionId, { events: [userMessage("after")] });
    const after = await w.next("turnCompleted", (e) => finishedText(e) === "after");
    const started = w.events.filter(
      (e) => e.cursor < after.cursor && e.event.case === "turnStarted",
    );
    expect(started).toHaveLength(2);
  });

  it("a steered retry on the other replica, while another turn runs, finds the stored input", async () => {
    const [a, b] = await replicas();
    const sessionId = `replicas-steer-${run}`;
    const key = { "Idempotency-Key": `steer-${run}` };
    expect((await a.post(sessionId, { events: [userMessage("first")] }, key)).status).toBe(202);
    const w = watch(a, sessionId);
    await w.next("turnCompleted");
    const { turnId, callId } = await startToolTurn(a.transport, sessionId);
    expect((await b.post(sessionId, { events: [userMessage("first")] }, key)).status).toBe(202);
    await b.post(sessionId, {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: turnId,
          call_id: callId,
          success: true,
          output: "y",
        },
      ],
    });
    const done = await w.next("turnCompleted", (e) => e.turnId === turnId);
    expect(w.count("inputAdmitted")).toBe(0);
    const started = w.events.filter(
      (e) => e.cursor <= done.cursor && e.event.case === "turnStarted",
    );
    expect(started).toHaveLength(2);
  });

  it("a client tool call of a turn started on one replica is answered through the other", async () => {
    const [a, b] = await replicas();
    const sessionId = `replicas-tool-${run}`;
    const { turnId, callId } = await startToolTurn(a.transport, sessionId);
    const w = watch(a, sessionId);
    const res = await b.post(sessionId, {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: turnId,
          call_id: callId,
          success: true,
          output: "via b",
        },
      ],
    });
    expect(res.status).toBe(202);
    const done = await w.next("turnCompleted");
    expect(done.turnId).toBe(turnId);
    expect(finishedText(done)).toBe("lookup returned via b");
  });
});
