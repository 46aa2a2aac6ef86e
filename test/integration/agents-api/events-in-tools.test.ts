// POST /v1/agents/sessions/{id}/events (ADR 0037, "Events in"): a client tool's result and an
// approval decision posted through the front door, for a turn started over gRPC with a client
// tool; the exact 400 the SDK helpers retry on for an unknown call.
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for.js";
import {
  finishedText,
  startEventsDoor,
  startToolTurn,
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

async function start(env: Record<string, string> = {}) {
  door = await startEventsDoor(env);
  return door;
}

function watch(d: EventsDoor, sessionId: string) {
  const w = watchSession(d.transport, sessionId);
  watches.push(w);
  return w;
}

const toolResult = (
  turnId: string,
  callId: string,
  answer: { success: boolean; output?: unknown; error?: string },
) => ({
  type: "agent.session.input.tool_result" as const,
  turn_id: turnId,
  call_id: callId,
  ...answer,
});

const decision = (requestId: string, choice: "approve" | "deny" | "cancel") => ({
  type: "agent.session.input.mcp_approval_request_result" as const,
  request_id: requestId,
  response: { type: "mcp_tool_call" as const, decision: choice },
});

describe("POST /v1/agents/sessions/{id}/events: tool results", () => {
  it("a result (content parts as text) resumes the turn; the same result again is 202 with no effect", async () => {
    const d = await start();
    const { turnId, callId } = await startToolTurn(d.transport, "tool-1");
    const w = watch(d, "tool-1");
    const answer = toolResult(turnId, callId, {
      success: true,
      output: [
        { type: "input_text", text: "sunny" },
        { type: "input_text", text: "21C" },
      ],
    });
    await d.sdk.beta.agents.sessions.events.create("tool-1", {
      events: [answer as never],
      "Idempotency-Key": "result-1",
    });
    const done = await w.next("turnCompleted");
    expect(finishedText(done)).toBe("lookup returned sunny\n21C");
    const again = await d.post("tool-1", { events: [answer] });
    expect(again.status).toBe(202);
    expect(w.count("toolCallFinished")).toBe(1);
  });

  it("success: false is a tool error carrying `error`", async () => {
    const d = await start();
    const { turnId, callId } = await startToolTurn(d.transport, "tool-2");
    const w = watch(d, "tool-2");
    const res = await d.post("tool-2", {
      events: [toolResult(turnId, callId, { success: false, error: "no such city" })],
    });
    expect(res.status).toBe(202);
    const finished = await w.next("toolCallFinished");
    expect(finished.event.case === "toolCallFinished" && finished.event.value.isError).toBe(true);
    expect(finishedText(await w.next("turnCompleted"))).toBe("lookup returned no such city");
  });

  it("an unknown call id gets exactly the 400 the SDK helpers retry on", async () => {
    const d = await start();
    const { turnId } = await startToolTurn(d.transport, "tool-3");
    const res = await d.post("tool-3", {
      events: [toolResult(turnId, "call-nope", { success: true, output: "x" })],
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe(
      '{"error":{"message":"Unknown pending tool call: call-nope","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
    );
    // The same for a turn id the session never had, and through the SDK's error class.
    const error = await d.sdk.beta.agents.sessions.events
      .create("tool-3", { events: [toolResult("turn-x", "call-1", { success: true }) as never] })
      .then(
        () => undefined,
        (e: unknown) => e as { status?: number; message?: string },
      );
    expect(error?.status).toBe(400);
    expect(error?.message).toContain("Unknown pending tool call: call-1");
  });
});

describe("POST /v1/agents/sessions/{id}/events: approvals", () => {
  it("approve lets the call reach the client, whose result then finishes the turn", async () => {
    const d = await start();
    const { turnId, callId } = await startToolTurn(d.transport, "approve-1", true);
    const w = watch(d, "approve-1");
    await d.sdk.beta.agents.sessions.events.create("approve-1", {
      events: [decision(callId, "approve")],
    });
    await w.next("toolCallRequested");
    expect((await d.post("approve-1", { events: [decision(callId, "approve")] })).status).toBe(202);
    await d.post("approve-1", {
      events: [toolResult(turnId, callId, { success: true, output: "ok" })],
    });
    expect(finishedText(await w.next("turnCompleted"))).toBe("lookup returned ok");
  });

  it("deny refuses the call with a fixed reason the model reads; the turn goes on", async () => {
    const d = await start();
    const { callId } = await startToolTurn(d.transport, "deny-1", true);
    const w = watch(d, "deny-1");
    expect((await d.post("deny-1", { events: [decision(callId, "deny")] })).status).toBe(202);
    const done = await w.next("turnCompleted");
    expect(finishedText(done)).toContain("The user denied this tool call.");
    expect(w.count("toolCallRequested")).toBe(0);
  });

  it("answers a parked turn: the approval and the result each resume it", async () => {
    // Turns that wait only for a client park at once.
    const d = await start({ TETHER_PARK_AFTER_MS: "0" });
    const { turnId, callId } = await startToolTurn(d.transport, "park-1", true);
    const w = watch(d, "park-1");
    await w.next("turnParked");
    expect((await d.post("park-1", { events: [decision(callId, "approve")] })).status).toBe(202);
    await w.next("toolCallRequested");
    await waitFor(() => w.count("turnParked") === 2, { what: "the turn to park on its result" });
    await d.post("park-1", {
      events: [toolResult(turnId, callId, { success: true, output: "from afar" })],
    });
    const done = await w.next("turnCompleted");
    expect(done.turnId).toBe(turnId);
    expect(finishedText(done)).toBe("lookup returned from afar");
  });

  it("an approval nobody asked for is a 400 naming the request", async () => {
    const d = await start();
    await startToolTurn(d.transport, "approve-2", true);
    const res = await d.post("approve-2", { events: [decision("call-nope", "approve")] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { message: "Unknown pending approval request: call-nope", param: null },
    });
  });
});
