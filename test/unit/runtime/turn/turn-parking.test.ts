// When a turn parks (the monitor), how an approval gates a call, and how a parked turn that will
// not go on is ended: each piece alone, with fakes for the waits and timers.
import { describe, expect, test } from "vitest";
import type { ToolCallPart } from "../../../../src/domain/conversation.js";
import { splitWaits } from "../../../../src/domain/parked-turns.js";
import type { TurnEvent } from "../../../../src/domain/turn-events.js";
import { ZERO_USAGE } from "../../../../src/domain/usage.js";
import type { TurnProgress } from "../../../../src/engine/index.js";
import type { ToolExecutor, ToolResult } from "../../../../src/ports/tool-executor.js";
import { endParkedTurn } from "../../../../src/runtime/turn/parked-resume.js";
import { approvalPolicy, withApprovals } from "../../../../src/runtime/turn/tool-approval.js";
import {
  createParkingMonitor,
  decodeProgress,
  encodeProgress,
} from "../../../../src/runtime/turn/turn-parking.js";
import { createMemoryReadyIndex } from "../../../../src/store/memory/ready-index.js";
import { createManualClock } from "../../../../src/ports/clock.js";

const call = (callId: string, toolName = "t"): ToolCallPart => ({
  type: "tool_call",
  callId,
  toolName,
  argumentsJson: "{}",
});
const request = (callId: string, toolName = "t") => ({
  callId,
  toolName,
  arguments: {},
  argumentsJson: "{}",
});
const progress = (batch: ToolCallPart[]): TurnProgress => ({
  messages: [{ role: "assistant", parts: batch }],
  toolCalls: [],
  usage: ZERO_USAGE,
  iterations: 1,
  assistantText: "",
  batch,
});
const context = { signal: new AbortController().signal, turnId: "turn" };

/** Timers the test fires by hand. */
function manualTimers() {
  const pending: { fn: () => void; ms: number }[] = [];
  return {
    setTimer: (fn: () => void, ms: number) => {
      pending.push({ fn, ms });
      return { ref: () => undefined } as unknown as NodeJS.Timeout;
    },
    fire: () => pending.splice(0).forEach((t) => t.fn()),
    count: () => pending.length,
  };
}

describe("parking monitor", () => {
  test("parks only when every running call of the batch waits outside, after the delay", async () => {
    const timers = manualTimers();
    let outside = 0;
    let parked = 0;
    const monitor = createParkingMonitor({
      parkAfterMs: 2_000,
      outsideWaits: () => outside,
      park: () => {
        parked++;
        return true;
      },
      setTimer: timers.setTimer,
    });
    let finishServer: (r: ToolResult) => void = () => undefined;
    const inner: ToolExecutor = {
      definitions: () => [],
      execute: (c) =>
        c.toolName === "server"
          ? new Promise((resolve) => (finishServer = resolve))
          : new Promise(() => undefined),
    };
    const tools = monitor.wrap(inner);
    monitor.onToolBatch(progress([call("s1", "server"), call("c1", "client")]));
    const server = tools.execute(request("s1", "server"), context);
    void tools.execute(request("c1", "client"), context);
    outside = 1;
    monitor.check();
    // A server call still runs: not yet.
    expect(timers.count()).toBe(0);
    finishServer({ output: "done" });
    await server;
    expect(timers.count()).toBe(1);
    timers.fire();
    expect(parked).toBe(1);
    expect(monitor.parking()).toBe(true);
    expect(monitor.snapshot()?.settled).toEqual({ s1: { output: "done" } });
  });

  test("a turn that cannot park waits where it is, and is not tried again", async () => {
    const timers = manualTimers();
    let tries = 0;
    const monitor = createParkingMonitor({
      parkAfterMs: 0,
      outsideWaits: () => 1,
      park: () => {
        tries++;
        return false;
      },
      setTimer: timers.setTimer,
    });
    const tools = monitor.wrap({
      definitions: () => [],
      execute: () => new Promise(() => undefined),
    });
    monitor.onToolBatch(progress([call("c1")]));
    void tools.execute(request("c1"), context);
    timers.fire();
    expect(monitor.parking()).toBe(false);
    monitor.check();
    expect(monitor.parkNowIfWaiting()).toBe(false);
    expect(tries).toBe(1);
  });

  test("an answer before the delay cancels the park", async () => {
    const timers = manualTimers();
    let outside = 1;
    let parked = 0;
    let answer: (r: ToolResult) => void = () => undefined;
    const monitor = createParkingMonitor({
      parkAfterMs: 2_000,
      outsideWaits: () => outside,
      park: () => {
        parked++;
        return true;
      },
      setTimer: timers.setTimer,
    });
    const tools = monitor.wrap({
      definitions: () => [],
      execute: () => new Promise((resolve) => (answer = resolve)),
    });
    monitor.onToolBatch(progress([call("c1")]));
    const running = tools.execute(request("c1"), context);
    expect(timers.count()).toBe(1);
    outside = 0;
    answer({ output: "ok" });
    await running;
    timers.fire();
    expect(parked).toBe(0);
  });

  test("a resumed batch answers settled calls from the saved results without running them", async () => {
    let runs = 0;
    const monitor = createParkingMonitor({
      parkAfterMs: 0,
      outsideWaits: () => 0,
      park: () => true,
      settled: { s1: { output: "saved" } },
    });
    const tools = monitor.wrap({
      definitions: () => [],
      execute: () => {
        runs++;
        return Promise.resolve({ output: "fresh" });
      },
    });
    monitor.onToolBatch(progress([call("s1"), call("s2")]));
    expect(await tools.execute(request("s1"), context)).toEqual({ output: "saved" });
    expect(await tools.execute(request("s2"), context)).toEqual({ output: "fresh" });
    expect(runs).toBe(1);
  });

  test("a tool that failed counts as finished: a resume gives its error, not a re-run", async () => {
    const monitor = createParkingMonitor({
      parkAfterMs: 0,
      outsideWaits: () => 0,
      park: () => true,
    });
    const tools = monitor.wrap({
      definitions: () => [],
      execute: () => Promise.reject(new Error("disk full")),
    });
    monitor.onToolBatch(progress([call("s1")]));
    await expect(tools.execute(request("s1"), context)).rejects.toThrow("disk full");
    expect(monitor.snapshot()?.settled).toEqual({
      s1: { output: { error: "disk full" }, isError: true },
    });
  });

  test("progress survives its encoding, image bytes included", () => {
    const saved = {
      v: 1 as const,
      engine: {
        ...progress([call("c1")]),
        messages: [
          {
            role: "user" as const,
            content: [
              {
                type: "image" as const,
                image: {
                  kind: "inline" as const,
                  mediaType: "image/png" as const,
                  data: new Uint8Array([1, 2, 3]),
                },
              },
            ],
          },
        ],
      },
      settled: {},
      shown: ["start:c1"],
      settings: { model: "m" },
      clientTools: [],
    };
    expect(decodeProgress(encodeProgress(saved))).toEqual(saved);
    expect(() => decodeProgress('{"v":2}')).toThrow(/format/u);
  });
});

describe("approval gate", () => {
  const asked: unknown[] = [];
  const waits = (decision: unknown, answered = false) => ({
    awaitDecision: (request: unknown) => {
      asked.push(request);
      return Promise.resolve(decision as never);
    },
    isSettled: () => answered,
  });
  const inner: ToolExecutor = {
    definitions: () => [],
    execute: () => Promise.resolve({ output: "ran" }),
  };

  test("approved calls are announced and run; denied ones get the reason; silence is an error", async () => {
    const announced: string[] = [];
    const gate = (answer: unknown, answered = false) =>
      withApprovals(inner, {
        needsApproval: (name) => name === "guarded",
        waits: waits(answer, answered),
        announceRun: (id) => Promise.resolve(void announced.push(id)),
        timeoutMs: 1_000,
      });
    const approved = { callId: "c1", approve: true, reason: "fine" };
    expect(await gate(approved).execute(request("c1", "guarded"), context)).toEqual({
      output: "ran",
    });
    expect(announced).toEqual(["c1"]);
    expect(asked[0]).toEqual({ callId: "c1", toolName: "guarded", argumentsJson: "{}" });
    // A client call an earlier run handed over and the client answered is not shown again.
    await gate(approved, true).execute(request("c2", "guarded"), context);
    expect(announced).toEqual(["c1"]);
    const denied = { callId: "c3", approve: false, reason: "too risky" };
    expect(await gate(denied).execute(request("c3", "guarded"), context)).toEqual({
      output: "not run: the call was denied (too risky)",
      isError: true,
    });
    expect(await gate("timed_out").execute(request("c4", "guarded"), context)).toMatchObject({
      isError: true,
    });
    // Tools without approval pass straight through.
    expect(await gate("timed_out").execute(request("c5", "free"), context)).toEqual({
      output: "ran",
    });
  });

  test("the policy joins client flags, the turn's list and the operator's", () => {
    const needs = approvalPolicy(
      [
        { name: "a", description: "", inputSchema: {}, requiresApproval: true },
        { name: "b", description: "", inputSchema: {} },
      ],
      ["c"],
      ["d"],
    );
    expect(["a", "b", "c", "d"].map(needs)).toEqual([true, false, true, true]);
  });
});

describe("ending a parked turn that will not go on", () => {
  test("answered calls keep their results; the others get an error; every call is paired", async () => {
    const events: TurnEvent[] = [];
    const result = await endParkedTurn(
      "t-7",
      {
        v: 1,
        engine: progress([call("s1", "server"), call("c1", "client"), call("c2", "client")]),
        settled: { s1: { output: { rows: 3 } } },
        shown: [],
        settings: {},
        clientTools: [],
      },
      "expired",
      [
        {
          kind: "result",
          callId: "c1",
          status: "answered",
          answer: { callId: "c1", output: "yes", isError: false },
        },
        { kind: "result", callId: "c2", status: "pending" },
        {
          kind: "approval",
          callId: "c2",
          status: "decided",
          decision: { callId: "c2", approve: true, reason: "yes" },
        },
      ],
      { emit: (e) => Promise.resolve(void events.push(e)) },
    );
    expect(result.outcome).toEqual({ kind: "stopped", reason: "park_expired" });
    expect(result.turnId).toBe("t-7");
    expect(result.messages.slice(1)).toEqual([
      { role: "tool", callId: "s1", toolName: "server", content: '{"rows":3}', isError: false },
      { role: "tool", callId: "c1", toolName: "client", content: "yes", isError: false },
      {
        role: "tool",
        callId: "c2",
        toolName: "client",
        content: "not run: the turn expired while it waited",
        isError: true,
      },
    ]);
    expect(events.map((e) => e.type)).toEqual([
      "tool_result",
      "tool_result",
      "tool_result",
      "terminal",
    ]);
  });

  test("waits split by kind into client calls and approvals", () => {
    expect(
      splitWaits([
        { kind: "result", callId: "c1" },
        { kind: "approval", callId: "c2" },
        { kind: "approval", callId: "c1" },
      ]),
    ).toEqual({ pendingCallIds: ["c1"], approvalCallIds: ["c2", "c1"] });
  });
});

describe("ready hints with due times", () => {
  test("a wake-up in the future is listed once due; a ready mark pulls it forward", async () => {
    const clock = createManualClock();
    const ready = createMemoryReadyIndex(clock);
    await ready.wakeAt("a" as never, clock.nowMs() + 1_000);
    await ready.wakeAt("b" as never, clock.nowMs() + 5_000);
    expect(await ready.listReady(10)).toEqual([]);
    clock.advance(1_000);
    expect(await ready.listReady(10)).toEqual(["a"]);
    await ready.markReady("b" as never);
    expect(await ready.listReady(10)).toEqual(["a", "b"]);
    expect(await ready.size()).toBe(2);
  });
});
