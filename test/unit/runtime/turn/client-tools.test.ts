// The client tool bridge against the memory store: answers come from the store (a lost signal
// only delays them), and a call's deadline is decided by the store, so an accepted answer is
// always the one the turn uses.
import { describe, expect, test, vi } from "vitest";
import { parseSessionId } from "../../../../src/domain/ids.js";
import { fenceOf } from "../../../../src/domain/lease.js";
import { createClientToolBridge } from "../../../../src/runtime/turn/client-tools.js";
import { createMemoryStore } from "../../../../src/store/memory/memory-store.js";

const TURN = "turn-1";

async function setup(timeoutMs: number) {
  const store = createMemoryStore();
  const sessionId = parseSessionId("s");
  const claimed = await store.tryClaimLease(
    sessionId,
    { ownerId: "r1", incarnationId: "i1", liveness: { kind: "opaque" } },
    60_000,
  );
  if (claimed.kind !== "acquired") throw new Error("lease not acquired");
  const bridge = createClientToolBridge({
    definitions: [],
    store,
    fence: fenceOf(claimed.lease),
    turnId: TURN,
    timeoutMs,
  });
  const signal = new AbortController().signal;
  const call = { callId: "c1", toolName: "ask", arguments: {}, argumentsJson: "{}" };
  return { store, sessionId, bridge, run: () => bridge.execute(call, { signal, turnId: TURN }) };
}

describe("client tool bridge", () => {
  test("an answer stored without a signal reaches the waiting call by polling the store", async () => {
    const { store, sessionId, bridge, run } = await setup(10_000);
    await bridge.record({ kind: "result", callId: "c1" });
    const result = run();
    await store.answerToolCalls(sessionId, TURN, [{ callId: "c1", output: "hi", isError: false }]);
    await expect(result).resolves.toEqual({ output: "hi", isError: false });
    expect(bridge.waiting()).toBe(0);
  });

  test("an answer that landed before the call waited is used at once", async () => {
    const { store, sessionId, bridge, run } = await setup(10_000);
    await bridge.record({ kind: "result", callId: "c1" });
    await store.answerToolCalls(sessionId, TURN, [
      { callId: "c1", output: "early", isError: false },
    ]);
    await bridge.record({ kind: "result", callId: "c1" });
    await expect(run()).resolves.toEqual({ output: "early", isError: false });
  });

  test("at the deadline the store closes the call: the turn gets a timeout error, a late answer is ignored", async () => {
    const { store, sessionId, bridge, run } = await setup(30);
    await bridge.record({ kind: "result", callId: "c1" });
    const result = await run();
    expect(result.isError).toBe(true);
    expect(result.output).toContain("did not answer within 30 ms");
    expect(
      await store.answerToolCalls(sessionId, TURN, [
        { callId: "c1", output: "late", isError: false },
      ]),
    ).toEqual({ accepted: [], ignored: ["c1"] });
  });

  test("a signal for a call the bridge never recorded is dropped", async () => {
    const { bridge } = await setup(10_000);
    bridge.deliver({
      kind: "result",
      callId: "c9",
      status: "answered",
      answer: { callId: "c9", output: "stray", isError: false },
    });
    expect(bridge.waiting()).toBe(0);
  });

  test("closeAll closes every open call of the turn; without calls it touches nothing", async () => {
    const { store, sessionId, bridge } = await setup(10_000);
    await bridge.closeAll();
    expect(await store.readToolCalls(sessionId, TURN)).toEqual([]);
    await bridge.record({ kind: "result", callId: "c1" });
    await bridge.closeAll();
    expect(await store.readToolCalls(sessionId, TURN)).toEqual([
      { kind: "result", callId: "c1", status: "closed" },
    ]);
  });

  test("a wait abandoned (the turn parked or was cancelled) stops reading the store and stays open", async () => {
    const { store, sessionId, bridge } = await setup(10_000);
    let reads = 0;
    const read = store.readToolCalls.bind(store);
    store.readToolCalls = (...args) => {
      reads++;
      return read(...args);
    };
    vi.useFakeTimers();
    try {
      await bridge.record({ kind: "result", callId: "c1" });
      const turn = new AbortController();
      const waited = bridge.awaitAnswer("c1", turn.signal);
      await vi.advanceTimersByTimeAsync(1_100);
      expect(reads).toBe(1);
      turn.abort(new Error("parked"));
      await expect(waited).rejects.toThrow("parked");
      await vi.advanceTimersByTimeAsync(5_000);
      expect(reads).toBe(1);
    } finally {
      vi.useRealTimers();
    }
    // Still pending in the store, for whoever resumes the turn.
    expect(await store.readToolCalls(sessionId, TURN)).toEqual([
      { kind: "result", callId: "c1", status: "pending" },
    ]);
  });

  test("a decision settles the call's approval, never its result, and reads back typed", async () => {
    const { store, sessionId, bridge } = await setup(10_000);
    await bridge.record({ kind: "approval", callId: "c1" });
    await bridge.record({ kind: "result", callId: "c1" });
    const signal = new AbortController().signal;
    const request = { callId: "c1", toolName: "ask", argumentsJson: "{}" };
    const decided = bridge.awaitDecision(request, signal);
    expect(bridge.waits()).toEqual([{ kind: "approval", callId: "c1" }]);
    await store.decideApprovals(sessionId, TURN, [{ callId: "c1", approve: false, reason: "no" }]);
    await expect(decided).resolves.toEqual({ callId: "c1", approve: false, reason: "no" });
    expect(bridge.isSettled({ kind: "approval", callId: "c1" })).toBe(true);
    expect(bridge.isSettled({ kind: "result", callId: "c1" })).toBe(false);
  });

  test("a decision a signal brings reaches the waiting approval; a result for the call does not", async () => {
    const { bridge } = await setup(10_000);
    await bridge.record({ kind: "approval", callId: "c1" });
    const decided = bridge.awaitDecision(
      { callId: "c1", toolName: "ask", argumentsJson: "{}" },
      new AbortController().signal,
    );
    bridge.deliver({
      kind: "result",
      callId: "c1",
      status: "answered",
      answer: { callId: "c1", output: "stray", isError: false },
    });
    expect(bridge.waiting()).toBe(1);
    bridge.deliver({
      kind: "approval",
      callId: "c1",
      status: "decided",
      decision: { callId: "c1", approve: true, reason: "ok" },
    });
    await expect(decided).resolves.toEqual({ callId: "c1", approve: true, reason: "ok" });
    expect(bridge.waiting()).toBe(0);
  });
});
