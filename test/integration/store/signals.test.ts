// Turn signals on memory and Redis: a decision reaches the running turn's listener as a decision
// and a result as a result, both when the listener hears them live and (Redis) when it starts
// after they were sent; a call's result and its decision never overwrite each other; a listener
// that stops late leaves the next turn's running-turn marker; (Redis) a commit that announces a
// turn ends its signals in its step, and a turn start marks its turn running, a signal sent
// before the turn's listener starts kept for it; a running turn's marker lives as long as its
// lease is renewed.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test, inject } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import type { ApprovalDecision, ClientToolResult } from "../../../src/domain/tool-calls.js";
import type { SessionSignals, TurnListener } from "../../../src/ports/session-signals.js";
import { createMemorySignals } from "../../../src/store/memory/signals.js";
import { createRedisSignals } from "../../../src/store/redis/signals.js";
import { createRedisStore } from "../../../src/store/redis/index.js";
import { sessionEventKeys } from "../../../src/store/redis/keys.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { acquire } from "../../conformance/support/expectations.js";
import {
  commitDraft,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
} from "../../conformance/support/fixtures.js";
import { connectStandalone, freshNamespace } from "../../support/redis-store-factory.js";
import { waitFor } from "../../support/wait-for.js";

let redis: Redis;

beforeAll(() => {
  redis = connectStandalone(inject("redisUrl"));
});

afterAll(async () => {
  await redis.quit();
});

const TURN = "turn-1";
const result: ClientToolResult = { callId: "c1", output: "42", isError: false };
const decision: ApprovalDecision = { callId: "c1", approve: false, reason: "too risky" };

interface Heard {
  listener: TurnListener;
  results: ClientToolResult[];
  decisions: ApprovalDecision[];
  /** Resolves once `count` results and decisions in all were heard. */
  heard(count: number): Promise<void>;
}

function recorder(): Heard {
  const results: ClientToolResult[] = [];
  const decisions: ApprovalDecision[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const check = (): void => {
    for (const w of waiters.splice(0)) {
      if (results.length + decisions.length >= w.count) w.resolve();
      else waiters.push(w);
    }
  };
  return {
    results,
    decisions,
    listener: {
      onCancel: () => undefined,
      onToolResult: (r) => {
        results.push(r);
        check();
      },
      onDecision: (d) => {
        decisions.push(d);
        check();
      },
    },
    heard: (count) =>
      new Promise<void>((resolve) => {
        waiters.push({ count, resolve });
        check();
      }),
  };
}

const backends: [string, () => SessionSignals][] = [
  ["memory", () => createMemorySignals()],
  ["redis", () => createRedisSignals({ redis, namespace: freshNamespace("signals") })],
];

describe.each(backends)("signals (%s)", (_name, make) => {
  test("a turn's listener that stops after the next turn marked itself leaves that marker", async () => {
    const signals = make();
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    const stopFirst = await signals.listen(sid, "turn-a", recorder().listener, 60_000);
    const stopNext = await signals.listen(sid, "turn-b", recorder().listener, 60_000);
    await stopFirst();
    expect(await signals.activeTurn(sid)).toBe("turn-b");
    await stopNext();
    expect(await signals.activeTurn(sid)).toBeUndefined();
    await signals.close();
  });

  test("a live listener hears a call's result and its decision, each as itself", async () => {
    const signals = make();
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    const heard = recorder();
    const stop = await signals.listen(sid, TURN, heard.listener, 60_000);
    try {
      expect(await signals.submitDecisions(sid, TURN, [decision])).toBe(true);
      expect(await signals.submitToolResults(sid, TURN, [result])).toBe(true);
      await heard.heard(2);
      expect(heard.decisions).toEqual([decision]);
      expect(heard.results).toEqual([result]);
    } finally {
      await stop();
      await signals.close();
    }
  });

  test("decisions for a turn that is not running are refused", async () => {
    const signals = make();
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    try {
      expect(await signals.submitDecisions(sid, TURN, [decision])).toBe(false);
    } finally {
      await signals.close();
    }
  });
});

describe("signals (redis): a listener that starts late", () => {
  test("replays a call's result and its decision, neither overwriting the other", async () => {
    const namespace = freshNamespace("signals");
    const sender = createRedisSignals({ redis, namespace });
    const receiver = createRedisSignals({ redis, namespace });
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    const first = await sender.listen(sid, TURN, recorder().listener, 60_000);
    try {
      // The turn is marked running; what is sent now is stored for a listener that starts later.
      expect(await sender.submitToolResults(sid, TURN, [result])).toBe(true);
      expect(await sender.submitDecisions(sid, TURN, [decision])).toBe(true);
      const late = recorder();
      const stop = await receiver.listen(sid, TURN, late.listener, 60_000);
      await late.heard(2);
      expect(late.results).toEqual([result]);
      expect(late.decisions).toEqual([decision]);
      await stop();
    } finally {
      await first().catch(() => undefined);
      await sender.close();
      await receiver.close();
    }
  });
});

describe("signals (redis): a commit that announces the turn ends its signals (ADR 0024)", () => {
  test("its cancel request, stored answers and running marker go in the commit's step; a later turn's marker stays", async () => {
    const namespace = freshNamespace("signals");
    const signals = createRedisSignals({ redis, namespace });
    const store = createRedisStore({ redis, namespace });
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
    const announce = (turnId: string) => ({ fence, turnId, eventJson: "{}", releaseIfIdle: false });
    const stopFirst = await signals.listen(sid, TURN, recorder().listener, 60_000);
    try {
      expect(await signals.submitToolResults(sid, TURN, [result])).toBe(true);
      expect(await signals.requestCancel(sid, TURN)).toBe(true);
      const receipt = await store.commit(commitDraft(sid, 0, { announce: announce(TURN) }));
      expect(receipt.announced?.signalsCleared).toBe(true);
      // Nothing of the turn is left: no running marker, and a listener of the same turn id
      // finds no cancel and no answers stored.
      expect(await signals.activeTurn(sid)).toBeUndefined();
      await stopFirst({ signalsCleared: true });
      const late = recorder();
      let cancelled = false;
      const stop = await signals.listen(
        sid,
        TURN,
        { ...late.listener, onCancel: () => void (cancelled = true) },
        60_000,
      );
      expect([cancelled, late.results]).toEqual([false, []]);
      await stop();
      // A later turn marked running keeps its marker through an earlier turn's commit.
      const stopNext = await signals.listen(sid, "turn-2", recorder().listener, 60_000);
      await store.commit(commitDraft(sid, 1, { announce: announce(TURN) }));
      expect(await signals.activeTurn(sid)).toBe("turn-2");
      await stopNext();
    } finally {
      await signals.close();
      await store.close();
    }
  });
});

/**
 * Resolves once `signals` has heard every signal published on the test's connection before the
 * call: a probe published after them on the same connection reaches the same subscription after
 * them, so once the probe's listener hears it, they have arrived (kept, or handed to a listener).
 */
async function heardSoFar(signals: SessionSignals, namespace: string): Promise<void> {
  const probe = parseSessionId(`probe-${Math.random().toString(36).slice(2)}`);
  let heard = false;
  const stop = await signals.listen(
    probe,
    "probe",
    { ...recorder().listener, onCancel: () => void (heard = true) },
    60_000,
    { markedRunning: true },
  );
  const message = JSON.stringify({ type: "cancel", turnId: "probe" });
  await redis.publish(sessionEventKeys(namespace, probe).channel, message);
  await waitFor(() => heard, { what: "the probe signal sent after the test's signals" });
  await stop({ signalsCleared: true });
}

describe("signals (redis): a turn marked running in its start's step (ADR 0024)", () => {
  const turnIdOf = (inputId: string) => `turn-of-${inputId}`;
  const claim = { owner: opaqueOwner("a"), ttlMs: LONG_TTL_MS, maxInputs: 1, turnIdOf };

  test("the start marks the turn it claims; a cancel sent before the listener starts still reaches it", async () => {
    const namespace = freshNamespace("signals");
    const signals = createRedisSignals({ redis, namespace });
    const other = createRedisSignals({ redis, namespace });
    const store = createRedisStore({ redis, namespace });
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    try {
      await signals.hearAllSessions?.();
      const receipt = await store.startTurn!(inputDraft(sid, "one"), claim);
      const turnId = turnIdOf(receipt.submitted.input.inputId);
      expect(receipt.started?.markedTurnId).toBe(turnId);
      expect(await signals.activeTurn(sid)).toBe(turnId);
      // Another replica cancels before this one's listener starts: the signal is kept for it.
      expect(await other.requestCancel(sid)).toBe(true);
      await heardSoFar(signals, namespace);
      let cancelled = 0;
      const stop = await signals.listen(
        sid,
        turnId,
        { ...recorder().listener, onCancel: () => void cancelled++ },
        60_000,
        { markedRunning: true },
      );
      expect(cancelled).toBe(1);
      // Heard live from then on, and once only.
      expect(await other.requestCancel(sid, turnId)).toBe(true);
      await heardSoFar(signals, namespace);
      expect(cancelled).toBe(2);
      await stop();
      expect(await signals.activeTurn(sid)).toBeUndefined();
    } finally {
      await signals.close();
      await other.close();
      await store.close();
    }
  });

  test("a start whose claim takes an older input, or nothing, marks no turn", async () => {
    const namespace = freshNamespace("signals");
    const signals = createRedisSignals({ redis, namespace });
    const store = createRedisStore({ redis, namespace });
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    try {
      await store.submitInput(inputDraft(sid, "older"));
      const receipt = await store.startTurn!(inputDraft(sid, "newer"), claim);
      expect(receipt.started?.inputs?.inputs.map((i) => i.payload)).toEqual(["older"]);
      expect(receipt.started?.markedTurnId).toBeUndefined();
      expect(await signals.activeTurn(sid)).toBeUndefined();
      // A held session: only the submit happens, nothing is marked.
      const busy = await store.startTurn!(inputDraft(sid, "third"), claim);
      expect(busy.started).toBeUndefined();
      expect(await signals.activeTurn(sid)).toBeUndefined();
    } finally {
      await signals.close();
      await store.close();
    }
  });
});

describe("signals (redis): a running turn's marker lives as long as its lease", () => {
  // Read from the marker's remaining time, not by sleeping past it: a renewal sets the marker's
  // TTL to the lease's, so a renewal far longer than the marker's own TTL shows at once.
  test("renewing the lease extends the marker to the lease's TTL; a stale fence or no marker changes nothing", async () => {
    const namespace = freshNamespace("signals");
    const signals = createRedisSignals({ redis, namespace });
    const store = createRedisStore({ redis, namespace });
    const sid = parseSessionId(`s-${Math.random().toString(36).slice(2)}`);
    const marker = sessionEventKeys(namespace, sid).activeTurn;
    const markerTtl = 5_000;
    try {
      const lease = await acquire(store, sid, opaqueOwner("a"), markerTtl);
      const fence = fenceOf(lease);
      const stop = await signals.listen(sid, TURN, recorder().listener, markerTtl);
      expect(await redis.pttl(marker)).toBeLessThanOrEqual(markerTtl);

      // A stale fence (another lease's token) renews nothing, the marker included.
      const stale = { ...fence, leaseToken: "not-this-lease" };
      expect((await store.renewLeases([stale], 600_000))[0]?.kind).not.toBe("renewed");
      expect(await redis.pttl(marker)).toBeLessThanOrEqual(markerTtl);

      expect((await store.renewLeases([fence], 600_000))[0]?.kind).toBe("renewed");
      expect(await redis.pttl(marker)).toBeGreaterThan(markerTtl);
      expect(await signals.activeTurn(sid)).toBe(TURN);
      expect(await signals.requestCancel(sid, TURN)).toBe(true);

      // Once no turn runs (the marker gone), a renewal does not bring a marker back.
      await redis.del(marker);
      expect((await store.renewLeases([fence], 600_000))[0]?.kind).toBe("renewed");
      expect(await redis.exists(marker)).toBe(0);
      await stop();
    } finally {
      await signals.close();
      await store.close();
    }
  });
});
