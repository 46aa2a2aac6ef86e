// The sweep picks up sessions nobody is driving: input left by a client that went away, or by a
// holder that died, is run once the sweep offers the session.
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { encodeInputPayload } from "../../../src/runtime/turn/input-payload.js";
import { startSweeper } from "../../../src/runtime/background/sweeper.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

for (const backend of [
  { name: "memory", redis: undefined },
  { name: "redis", redis },
] as const) {
  describe(`sweep on ${backend.name}`, () => {
    it("drives a hinted session with waiting input and reports the waiting count", async () => {
      const h = createRuntimeHarness({
        provider: createEchoProvider(),
        ...(backend.redis ? { redis: backend.redis } : {}),
      });
      const sessionId = "orphaned" as SessionId;
      await h.store.submitInput({
        sessionId,
        delivery: { kind: "next_turn" },
        payload: encodeInputPayload({
          items: [{ type: "text", text: "left behind" }],
          clientTools: [],
          settings: {},
        }),
      });
      await h.deps.ready.markReady(sessionId);
      const depths: number[] = [];
      const sweeper = startSweeper({
        driver: h.runtime.driver,
        ready: h.deps.ready,
        logger: silentLogger,
        intervalMs: 60_000,
        metrics: { setQueueDepth: (_kind, depth) => depths.push(depth) },
      });
      try {
        expect(await sweeper.sweepOnce()).toBe(1);
        expect(depths).toEqual([1]);
        await waitFor(async () => (await h.store.loadSession(sessionId))?.headRevision === 2, {
          what: "the swept turn's commit",
        });
        const session = await h.store.loadSession(sessionId);
        expect(session?.headRevision).toBe(2);
        expect(session?.messages.join("")).toContain("left behind");
        // Drained: the hint is cleared, so the next sweep offers nothing.
        await waitFor(async () => (await h.deps.ready.size()) === 0, {
          what: "the ready hint to clear",
        });
        expect(await sweeper.sweepOnce()).toBe(0);
        expect(depths.at(-1)).toBe(0);
      } finally {
        sweeper.stop();
        await h.runtime.drain(1_000);
      }
    });

    it("reports the sessions it found due for a count by tenant, and none while another sweeps", async () => {
      const h = createRuntimeHarness({
        provider: createEchoProvider(),
        ...(backend.redis ? { redis: backend.redis } : {}),
      });
      // Hints without work: the drive finds nothing and clears them.
      await h.deps.ready.markReady("acme:one" as SessionId);
      await h.deps.ready.markReady("beta:two" as SessionId);
      const reported: string[][] = [];
      let holdsSweep = true;
      const sweeper = startSweeper({
        driver: h.runtime.driver,
        ready: h.deps.ready,
        logger: silentLogger,
        intervalMs: 60_000,
        guard: async (task) => {
          if (!holdsSweep) return false;
          await task();
          return true;
        },
        metrics: {
          setQueueDepth: () => undefined,
          setReadySessions: (ids) => reported.push([...ids].sort()),
        },
      });
      try {
        await sweeper.sweepOnce();
        holdsSweep = false;
        await sweeper.sweepOnce();
        expect(reported).toEqual([["acme:one", "beta:two"], []]);
      } finally {
        sweeper.stop();
        await h.runtime.drain(1_000);
      }
    });
  });
}
