// POST /v1/agents/sessions/{id}/events (ADR 0037, "Events in"): messages, steering, cancel, the
// Idempotency-Key and the busy strategy header, through the official Node SDK and raw HTTP
// against the real server; the effects are read over gRPC on the same port.
import { createClient } from "@connectrpc/connect";
import { APIError } from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import {
  finishedText,
  outcomeOf,
  startEventsDoor,
  startToolTurn,
  userMessage,
  watchSession,
  type EventsDoor,
  type SessionWatch,
} from "./events-in-support.js";

let door: EventsDoor | undefined;
const watches: SessionWatch[] = [];
afterEach(async () => {
  for (const w of watches.splice(0)) w.stop();
  await door?.wired.close();
  door = undefined;
});

async function start() {
  door = await startEventsDoor();
  return door;
}

function watch(d: EventsDoor, sessionId: string) {
  const w = watchSession(d.transport, sessionId);
  watches.push(w);
  return w;
}

/** What an APIError the SDK threw says: status and body. */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof APIError)) throw new Error(`expected an APIError, got ${String(error)}`);
  return { status: error.status, error: error.error as Record<string, unknown> };
}

describe("POST /v1/agents/sessions/{id}/events: messages", () => {
  it("a message to a new session id creates it and starts a turn that completes (SDK: void on 202)", async () => {
    const d = await start();
    const answer = await d.sdk.beta.agents.sessions.events.create("fresh-1", {
      events: [userMessage("hello door")],
    });
    expect(answer).toBeUndefined();
    const w = watch(d, "fresh-1");
    expect(finishedText(await w.next("turnCompleted"))).toBe("hello door");

    const raw = await d.post("fresh-2", { events: [userMessage("raw")] });
    expect(raw.status).toBe(202);
    expect(await raw.text()).toBe("");
    expect(raw.headers.get("x-request-id")).toMatch(/^req_/u);
  });

  it("steers a message into the running turn by default: admitted there, no second turn", async () => {
    const d = await start();
    const { turnId, callId } = await startToolTurn(d.transport, "steer-1");
    const w = watch(d, "steer-1");
    expect((await d.post("steer-1", { events: [userMessage("and also this")] })).status).toBe(202);
    await d.sdk.beta.agents.sessions.events.create("steer-1", {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: turnId,
          call_id: callId,
          success: true,
          output: "42",
        },
      ],
    });
    const admitted = await w.next("inputAdmitted");
    expect(admitted.turnId).toBe(turnId);
    const done = await w.next("turnCompleted");
    expect(done.turnId).toBe(turnId);
    expect(finishedText(done)).toBe("and also this");
    expect(w.count("turnStarted")).toBe(1);
  });

  it("Tether-Busy-Strategy: reject on a busy session is 409 with x-should-retry: false", async () => {
    const d = await start();
    await startToolTurn(d.transport, "busy-1");
    const res = await d.post(
      "busy-1",
      { events: [userMessage("not now")] },
      { "Tether-Busy-Strategy": "reject" },
    );
    expect(res.status).toBe(409);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(await res.json()).toMatchObject({
      error: { type: "conflict_error", code: "session_busy" },
    });
    const inputs = await createClient(QueueService, d.transport).listInputs({
      sessionId: "busy-1",
    });
    // Only the running turn's own (claimed) input: the refused message was not stored.
    expect(inputs.inputs).toHaveLength(1);

    const bad = await d.post(
      "busy-1",
      { events: [userMessage("x")] },
      { "Tether-Busy-Strategy": "later" },
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: "Tether-Busy-Strategy" } });
  });

  it("Tether-Busy-Strategy: enqueue waits for the next turn", async () => {
    const d = await start();
    const { turnId, callId } = await startToolTurn(d.transport, "queue-1");
    const w = watch(d, "queue-1");
    const res = await d.post(
      "queue-1",
      { events: [userMessage("later")] },
      { "Tether-Busy-Strategy": "enqueue" },
    );
    expect(res.status).toBe(202);
    await d.post("queue-1", {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: turnId,
          call_id: callId,
          success: true,
          output: "1",
        },
      ],
    });
    const next = await w.next("turnCompleted", (e) => e.turnId !== turnId);
    expect(finishedText(next)).toBe("later");
  });
});

describe("POST /v1/agents/sessions/{id}/events: cancel", () => {
  it("cancels the waiting turn, and answers 202 again when nothing runs", async () => {
    const d = await start();
    const { turnId } = await startToolTurn(d.transport, "cancel-1");
    const w = watch(d, "cancel-1");
    const cancel = { events: [{ type: "agent.session.input.cancel" as const }] };
    await d.sdk.beta.agents.sessions.events.create("cancel-1", cancel);
    const done = await w.next("turnCompleted");
    expect(done.turnId).toBe(turnId);
    expect(outcomeOf(done)).toBe("stopped");
    expect((await d.post("cancel-1", cancel)).status).toBe(202);
    expect((await d.post("cancel-1", cancel)).status).toBe(202);
  });
});

describe("POST /v1/agents/sessions/{id}/events: Idempotency-Key", () => {
  it("a message retried twice with its key is one input and one turn; other content under it is 422", async () => {
    const d = await start();
    const events = d.sdk.beta.agents.sessions.events;
    const send = (text: string) =>
      events.create("idem-1", { events: [userMessage(text)], "Idempotency-Key": "key-1" });
    await send("only once");
    const w = watch(d, "idem-1");
    await w.next("turnCompleted");
    await send("only once");
    await events.create(
      "idem-1",
      { events: [userMessage("only once")] },
      { headers: { "Idempotency-Key": "key-1" } },
    );
    const conflict = await refusal(send("something else"));
    expect(conflict.status).toBe(422);
    expect(conflict.error).toMatchObject({
      type: "invalid_request_error",
      code: "source_key_conflict",
    });

    // A later turn proves the log has caught up: still only the one input's turn before it.
    await events.create("idem-1", { events: [userMessage("after")] });
    const after = await w.next("turnCompleted", (e) => finishedText(e) === "after");
    const before = w.events.filter((e) => e.cursor < after.cursor);
    const started = before.filter((e) => e.event.case === "turnStarted");
    expect(started).toHaveLength(2);
    expect(
      started.map((e) => (e.event.case === "turnStarted" ? e.event.value.inputIds.length : 0)),
    ).toEqual([1, 1]);
  });

  it("a retry that finds the turn its first attempt started still running is the same input", async () => {
    const d = await start();
    const headers = { "Idempotency-Key": "key-2" };
    // The first attempt finds the session idle: stored for the next turn.
    expect((await d.post("idem-2", { events: [userMessage("first")] }, headers)).status).toBe(202);
    const w = watch(d, "idem-2");
    await w.next("turnCompleted");
    // Now a turn waits; a steered retry would name it: it must still find the stored input.
    const { turnId, callId } = await startToolTurn(d.transport, "idem-2");
    expect((await d.post("idem-2", { events: [userMessage("first")] }, headers)).status).toBe(202);
    const inputs = await createClient(QueueService, d.transport).listInputs({
      sessionId: "idem-2",
    });
    // Only the waiting turn's own input: the retry stored nothing.
    expect(inputs.inputs.map((i) => i.sourceKey)).toEqual([""]);
    await d.post("idem-2", {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: turnId,
          call_id: callId,
          success: true,
          output: "x",
        },
      ],
    });
    const done = await w.next("turnCompleted", (e) => e.turnId === turnId);
    expect(w.count("inputAdmitted")).toBe(0);
    expect(
      w.events.filter((e) => e.cursor < done.cursor && e.event.case === "turnStarted"),
    ).toHaveLength(2);
  });
});

describe("POST /v1/agents/sessions/{id}/events: a steered message retried under its key", () => {
  it("is found after the turn it joined has ended: 202, no second input; other content is 422", async () => {
    const d = await start();
    const { turnId, callId } = await startToolTurn(d.transport, "idem-3");
    const w = watch(d, "idem-3");
    const headers = { "Idempotency-Key": "key-4" };
    expect((await d.post("idem-3", { events: [userMessage("also")] }, headers)).status).toBe(202);
    await d.post("idem-3", {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: turnId,
          call_id: callId,
          success: true,
          output: "z",
        },
      ],
    });
    const joined = await w.next("turnCompleted", (e) => e.turnId === turnId);
    expect(finishedText(joined)).toBe("also");
    // The session is idle now: the retry's own delivery would be the next turn's.
    expect((await d.post("idem-3", { events: [userMessage("also")] }, headers)).status).toBe(202);
    expect((await d.post("idem-3", { events: [userMessage("other")] }, headers)).status).toBe(422);
    await d.post("idem-3", { events: [userMessage("after")] });
    const after = await w.next("turnCompleted", (e) => finishedText(e) === "after");
    const started = w.events.filter(
      (e) => e.cursor < after.cursor && e.event.case === "turnStarted",
    );
    expect(started).toHaveLength(2);
    expect(w.count("inputAdmitted")).toBe(1);
  });
});

describe("POST /v1/agents/sessions/{id}/events: a steered message retried long after", () => {
  it("10 turns after the turn it joined, the retry under its key is 202 and stores nothing", async () => {
    const d = await start();
    const { turnId, callId } = await startToolTurn(d.transport, "idem-10");
    const w = watch(d, "idem-10");
    const headers = { "Idempotency-Key": "key-10" };
    expect((await d.post("idem-10", { events: [userMessage("joined")] }, headers)).status).toBe(
      202,
    );
    await d.post("idem-10", {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: turnId,
          call_id: callId,
          success: true,
          output: "z",
        },
      ],
    });
    expect(finishedText(await w.next("turnCompleted", (e) => e.turnId === turnId))).toBe("joined");
    for (let i = 0; i < 10; i++) {
      await d.post("idem-10", { events: [userMessage(`later ${i}`)] });
      await w.next("turnCompleted", (e) => finishedText(e) === `later ${i}`);
    }
    expect((await d.post("idem-10", { events: [userMessage("joined")] }, headers)).status).toBe(
      202,
    );
    expect((await d.post("idem-10", { events: [userMessage("other")] }, headers)).status).toBe(422);
    await d.post("idem-10", { events: [userMessage("last")] });
    const last = await w.next("turnCompleted", (e) => finishedText(e) === "last");
    const started = w.events.filter(
      (e) => e.cursor < last.cursor && e.event.case === "turnStarted",
    );
    // The tool turn, ten later ones, the last: the retry started none and was admitted nowhere.
    expect(started).toHaveLength(12);
    expect(w.count("inputAdmitted")).toBe(1);
  });
});

describe("POST /v1/agents/sessions/{id}/events: interrupt under a key", () => {
  it("interrupts the running turn once: a retry with the key cancels nothing", async () => {
    const d = await start();
    const first = await startToolTurn(d.transport, "int-1");
    const w = watch(d, "int-1");
    const headers = { "Tether-Busy-Strategy": "interrupt", "Idempotency-Key": "key-3" };
    expect((await d.post("int-1", { events: [userMessage("stop that")] }, headers)).status).toBe(
      202,
    );
    expect(outcomeOf(await w.next("turnCompleted", (e) => e.turnId === first.turnId))).toBe(
      "stopped",
    );
    await w.next("turnCompleted", (e) => finishedText(e) === "stop that");
    const later = await startToolTurn(d.transport, "int-1");
    // The retry finds its input stored: the turn now running is not the one it meant to stop.
    expect((await d.post("int-1", { events: [userMessage("stop that")] }, headers)).status).toBe(
      202,
    );
    await d.post("int-1", {
      events: [
        {
          type: "agent.session.input.tool_result",
          turn_id: later.turnId,
          call_id: later.callId,
          success: true,
          output: "fine",
        },
      ],
    });
    const done = await w.next("turnCompleted", (e) => e.turnId === later.turnId);
    expect(finishedText(done)).toBe("lookup returned fine");
  });
});

describe("POST /v1/agents/sessions/{id}/events: the body", () => {
  it("is checked once: a 400 names the field", async () => {
    const d = await start();
    const cases: [unknown, string][] = [
      [{}, "events"],
      [{ events: [] }, "events"],
      [{ events: [{ type: "agent.session.input.bogus" }] }, "events[0].type"],
      [
        { events: [userMessage("ok"), { type: "agent.session.input.tool_result", turn_id: "t" }] },
        "events[1].call_id",
      ],
      [
        {
          events: [
            {
              type: "agent.session.input.message",
              input: [{ role: "user", content: [{ type: "input_text" }] }],
            },
          ],
        },
        "events[0].input[0].content[0].text",
      ],
      [
        {
          events: [
            {
              type: "agent.session.input.mcp_approval_request_result",
              request_id: "c",
              response: { type: "mcp_tool_call", decision: "maybe" },
            },
          ],
        },
        "events[0].response.decision",
      ],
      [{ events: [{ type: "agent.session.input.cancel", extra: 1 }] }, "events[0].extra"],
    ];
    for (const [body, param] of cases) {
      const res = await d.post("body-1", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", param } });
    }
    // Refused before anything happened: the session was never created.
    const res = await d.post("body-1", { events: [{ type: "agent.session.input.cancel" }] });
    expect(res.status).toBe(404);
  });
});
