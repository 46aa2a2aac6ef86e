// Steer hearing (ADR 0041), what lets a turn skip its before-completion claim: the token is
// offered only where every steer stored for a turn reaches this replica (memory once a store's
// submit tells the signals; Redis while its pattern subscription is in effect; never on Cluster),
// a steer stored before the turn's listener starts is kept for it, another replica's steer is
// heard through the submit's own publish, and the token moves when a kept steer is dropped or
// the signals close, so a turn that started before then claims as before.
import { afterEach, describe, expect, test } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import type { SessionSignals, TurnListener } from "../../../src/ports/session-signals.js";
import { createMemorySignals } from "../../../src/store/memory/signals.js";
import { createRedisSignals } from "../../../src/store/redis/signals.js";
import { createRedisStore } from "../../../src/store/redis/index.js";
import { activeTurn, inputDraft } from "../../conformance/support/fixtures.js";
import { connectBothForFile, freshNamespace } from "../../support/redis-store-factory.js";
import { waitFor } from "../../support/wait-for.js";

const { redis, cluster } = connectBothForFile();
const SID = parseSessionId("steer-hearing");

function steerCounter(): TurnListener & { steers: number } {
  const counter = {
    steers: 0,
    onCancel: () => undefined,
    onToolResult: () => undefined,
    onDecision: () => undefined,
    onSteer: () => {
      counter.steers += 1;
    },
  };
  return counter;
}

const closing: SessionSignals[] = [];
afterEach(async () => {
  for (const s of closing.splice(0)) await s.close();
});

describe("steer hearing in memory", () => {
  test("offered once a store tells it of steers; an early steer is kept; a drop moves the token", async () => {
    const signals = createMemorySignals();
    expect(signals.steerHearing?.()).toBeUndefined();
    const notice = signals.steerNotice?.();
    if (!notice) throw new Error("memory signals take a steer notice");
    const token = signals.steerHearing?.();
    expect(token).toBeDefined();
    notice(SID, "turn-early");
    const listener = steerCounter();
    await signals.listen(SID, "turn-early", listener, 1_000);
    expect(listener.steers).toBe(1);
    notice(SID, "turn-early");
    expect(listener.steers).toBe(2);
    // Steers for turns nobody listens for are kept up to a bound; past it one is dropped.
    for (let i = 0; i < 257; i++) notice(SID, `turn-${i}`);
    expect(signals.steerHearing?.()).not.toBe(token);
  });
});

describe("steer hearing on Redis", () => {
  test("offered while subscribed; another replica's steer reaches the listener; closing moves it", async () => {
    const namespace = freshNamespace("steer-hearing");
    const running = createRedisSignals({ redis, namespace });
    const store = createRedisStore({ redis, namespace });
    closing.push(running);
    expect(running.steerHearing?.()).toBeUndefined();
    await running.hearAllSessions?.();
    const token = running.steerHearing?.();
    expect(token).toBeDefined();
    const listener = steerCounter();
    await running.listen(SID, "turn-a", listener, 5_000);
    // Stored by a store this replica did not tell: heard through the submit's publish.
    await store.submitInput(inputDraft(SID, "next"));
    await store.submitInput(inputDraft(SID, "steer", activeTurn("turn-a", "after_work")));
    await waitFor(() => listener.steers === 1, { what: "the steer heard by the listener" });
    expect(running.steerHearing?.()).toBe(token);
    await running.close();
    expect(running.steerHearing?.()).toBeUndefined();
  });

  test("a steer kept for a turn not yet listening is handed over; a dropped one moves the token", async () => {
    const namespace = freshNamespace("steer-kept");
    const signals = createRedisSignals({ redis, namespace });
    closing.push(signals);
    await signals.hearAllSessions?.();
    const token = signals.steerHearing?.();
    const notice = signals.steerNotice?.();
    if (!notice) throw new Error("Redis signals take a steer notice");
    notice(SID, "turn-marked");
    const listener = steerCounter();
    await signals.listen(SID, "turn-marked", listener, 5_000, { markedRunning: true });
    expect(listener.steers).toBe(1);
    expect(signals.steerHearing?.()).toBe(token);
    for (let i = 0; i < 257; i++) notice(SID, `turn-${i}`);
    expect(signals.steerHearing?.()).not.toBe(token);
  });
});

describe("steer hearing on Redis Cluster", () => {
  test("is not offered: every turn claims as before", async () => {
    const signals = createRedisSignals({ redis: cluster, namespace: freshNamespace("steer-c") });
    closing.push(signals);
    await signals.hearAllSessions?.();
    expect(signals.steerHearing?.()).toBeUndefined();
  });
});
