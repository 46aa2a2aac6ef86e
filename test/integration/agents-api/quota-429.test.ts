// Tenant quotas through the front door (ADR 0015, 0028, 0037): a used-up reject-mode quota refuses
// a message and a create with input as a 429 with `retry-after-ms` before anything is written, the
// concurrent_streams limit refuses an events stream the same way, and the official Node SDK gets
// RateLimitError (no retries) or waits retry-after-ms and gets through once the limit frees.
import { createClient } from "@connectrpc/connect";
import OpenAI, { RateLimitError } from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { QuotaLimitKind, QuotaService } from "../../../src/gen/tether/v1/quota_service_pb.js";
import { waitFor } from "../../support/wait-for.js";
import {
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

/** One turn at a time, refused rather than queued; turns waiting for a client do not park. */
const ONE_TURN = JSON.stringify({ default: { concurrent_turns: { max: 1, mode: "reject" } } });

/** A door whose one turn slot is held by a turn that waits for the client tool `lookup`. */
async function busyDoor(): Promise<{ d: EventsDoor; turnId: string; callId: string }> {
  const d = await startEventsDoor({ TETHER_QUOTAS: ONE_TURN, TETHER_PARK_AFTER_MS: "600000" });
  door = d;
  const { turnId, callId } = await startToolTurn(d.transport, "holder");
  return { d, turnId, callId };
}

const sdkWith = (d: EventsDoor, options: ConstructorParameters<typeof OpenAI>[0] = {}) =>
  new OpenAI({ baseURL: `${d.baseUrl}/v1`, apiKey: "any-key", ...options });

describe("the front door's quota 429s", () => {
  it("raw HTTP: a message and a create with input are 429 with retry-after-ms, and write nothing", async () => {
    const { d } = await busyDoor();
    const res = await d.post("other", { events: [userMessage("hi")] });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after-ms")).toBe("1000");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({
      error: {
        message: "tenant quota concurrent_turns is used up",
        type: "rate_limit_error",
        param: null,
        code: "quota_exhausted",
      },
    });
    const create = await fetch(`${d.baseUrl}/v1/agents/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ environment: { type: "none" }, agent: { model: "m" }, input: "hi" }),
    });
    expect(create.status).toBe(429);
    expect(create.headers.get("retry-after-ms")).toBe("1000");
    // Neither made a session: the SDK's retry of the 429 cannot leave a duplicate behind.
    const sessions = await sdkWith(d, { maxRetries: 0 }).beta.agents.sessions.list();
    expect(sessions.data).toEqual([]);
    // What is not input still goes through: a create without one.
    const empty = await sdkWith(d, { maxRetries: 0 }).beta.agents.sessions.create({
      environment: { type: "none" },
      agent: { model: "m" },
    });
    expect(empty.status).toBe("idle");
  });

  it("Node SDK without retries: RateLimitError carrying retry-after-ms", async () => {
    const { d } = await busyDoor();
    const error = await sdkWith(d, { maxRetries: 0 })
      .beta.agents.sessions.events.create("other", { events: [userMessage("hi")] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(RateLimitError);
    const limited = error as RateLimitError;
    expect(limited.status).toBe(429);
    expect(limited.headers?.get("retry-after-ms")).toBe("1000");
    expect(limited.code).toBe("quota_exhausted");
  });

  it("Node SDK with retries: waits retry-after-ms, then its retry is accepted once the turn ended", async () => {
    const { d, turnId, callId } = await busyDoor();
    const attempts: { status: number; at: number; retryCount: string | null }[] = [];
    // The SDK's fetch: on the 429 the test frees the slot (answers the holder's tool, waits for
    // its turn to end) before the SDK sees the answer, so its one retry finds room.
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const retryCount = new Headers(init?.headers).get("x-stainless-retry-count");
      attempts.push({ status: response.status, at: Date.now(), retryCount });
      if (response.status === 429) await freeSlot(d, turnId, callId);
      return response;
    };
    await sdkWith(d, { maxRetries: 2, fetch: recording }).beta.agents.sessions.events.create(
      "other",
      { events: [userMessage("after the wait")] },
    );
    expect(attempts.map((a) => [a.status, a.retryCount])).toEqual([
      [429, "0"],
      [202, "1"],
    ]);
    // retry-after-ms was honoured (the SDK's own backoff would have been about half of it).
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(950);
    const w = watchSession(d.transport, "other");
    watches.push(w);
    expect((await w.next("turnCompleted")).turnId).not.toBe(turnId);
  });

  it("concurrent_streams: the second events stream is a 429 (RateLimitError); the SDK's retry opens it once the first closed", async () => {
    const d = await startEventsDoor({
      TETHER_QUOTAS: JSON.stringify({ default: { concurrent_streams: 1 } }),
    });
    door = d;
    await d.post("s1", { events: [userMessage("hello")] });
    const first = await sdkWith(d, { maxRetries: 0 }).beta.agents.sessions.events.stream("s1");
    const error = await sdkWith(d, { maxRetries: 0 })
      .beta.agents.sessions.events.stream("s1")
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).headers?.get("retry-after-ms")).toBe("1000");
    const statuses: number[] = [];
    const closing: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      if (response.status === 429) {
        first.controller.abort();
        await waitFor(async () => (await openStreams(d)) === 0n, {
          what: "the first stream to give its slot back",
        });
      }
      return response;
    };
    const second = await sdkWith(d, {
      maxRetries: 2,
      fetch: closing,
    }).beta.agents.sessions.events.stream("s1");
    expect(statuses).toEqual([429, 200]);
    second.controller.abort();
  });
});

async function freeSlot(d: EventsDoor, turnId: string, callId: string): Promise<void> {
  const answer = await d.post("holder", {
    events: [
      {
        type: "agent.session.input.tool_result",
        turn_id: turnId,
        call_id: callId,
        success: true,
        output: "ok",
      },
    ],
  });
  expect(answer.status).toBe(202);
  await waitFor(
    async () => (await d.wired.built.quotas.readQuotaUsage("default")).runningTurns === 0,
    { what: "the holder's turn to give its slot back" },
  );
}

/** The streams the tenant holds open on the replica, by GetQuotaUsage. */
async function openStreams(d: EventsDoor): Promise<bigint | undefined> {
  const usage = await createClient(QuotaService, d.transport).getQuotaUsage({});
  return usage.limits.find((l) => l.kind === QuotaLimitKind.CONCURRENT_STREAMS)?.used;
}
