// The ready mark of a session with waiting work survives a holder's clear that races the work's
// arrival (ADR 0026). A holder that found nothing clears the mark; input stored and marked
// meanwhile (a turn start on another replica, a submit) must keep a mark, or nobody but a
// waiting client ever drives the session again: the quota slot probe on Cluster hung so, the
// survivor's sweep never finding the dead holder's session. Memory, Redis and Redis Cluster.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import type { LeaseOwner } from "../../../src/domain/lease.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { startSweeper, type Sweeper } from "../../../src/runtime/background/sweeper.js";
import { encodeInputPayload } from "../../../src/runtime/turn/input-payload.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  type RuntimeHarness,
  type RuntimeHarnessOptions,
} from "../../support/runtime-harness.js";
import { connectBothForFile } from "../../support/redis-store-factory.js";
import { waitFor } from "../../support/wait-for.js";

const { redis, cluster } = connectBothForFile();

/** Another replica, alive for the lease's TTL and then gone (opaque: never provably dead). */
const OTHER: LeaseOwner = {
  ownerId: "other-replica",
  incarnationId: "other-replica:1",
  liveness: { kind: "opaque" },
};

const draft = (sessionId: SessionId, text: string) => ({
  sessionId,
  delivery: { kind: "next_turn" as const },
  payload: encodeInputPayload({ items: [{ type: "text", text }], clientTools: [], settings: {} }),
});

const backends = [
  { name: "memory", options: {} },
  { name: "redis", options: { redis } },
  { name: "redis cluster", options: { redis: cluster } },
] satisfies { name: string; options: Partial<RuntimeHarnessOptions> }[];

for (const backend of backends) {
  describe(`the ready mark on ${backend.name}`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    function harness(options: Partial<RuntimeHarnessOptions>): RuntimeHarness {
      const h = createRuntimeHarness({
        provider: createEchoProvider(),
        ...backend.options,
        ...options,
      });
      cleanups.push(() => h.runtime.drain(1_000));
      return h;
    }

    function sweeperOf(h: RuntimeHarness): Sweeper {
      const sweeper = startSweeper({
        driver: h.runtime.driver,
        ready: h.deps.ready,
        logger: silentLogger,
        intervalMs: 60_000,
      });
      cleanups.push(() => Promise.resolve(sweeper.stop()));
      return sweeper;
    }

    it("stays on a session whose turn another replica started while a holder found nothing", async () => {
      // The probe's sequence: this replica's sweep drives the session on a mark that landed
      // before the input; its loop finds nothing, releases, and looks for pending work; that
      // look answers before another replica's turn start (lease, input, claim) lands, and the
      // start's mark lands before this holder's clear. The other replica then dies.
      const sessionId = `ready-race-${randomUUID()}` as SessionId;
      let interposed = false;
      const h = harness({
        wrapStore: (store): RuntimeStore => ({
          ...store,
          listInputs: async (id) => {
            const before = await store.listInputs(id);
            if (!interposed && id === sessionId) {
              interposed = true;
              const started = await store.startTurn?.(draft(sessionId, "started elsewhere"), {
                owner: OTHER,
                ttlMs: 300,
                maxInputs: 1,
              });
              expect(started?.started?.inputs?.inputs).toHaveLength(1);
              // Its replica marks the session once the start's step answered (where the store
              // does not mark it in that step).
              if (!store.keepsReadyIndex) await h.deps.ready.markReady(sessionId);
            }
            return before;
          },
        }),
      });
      const sweeper = sweeperOf(h);
      await h.deps.ready.markReady(sessionId);
      expect(await sweeper.sweepOnce()).toBe(1);
      await waitFor(() => interposed && !h.runtime.driver.isDriving(sessionId), {
        what: "the holder's loop to end",
      });
      // The other replica holds the session and its claimed input: it may die, so the mark stays.
      expect((await h.store.currentLease(sessionId))?.owner.ownerId).toBe("other-replica");
      expect(await h.deps.ready.listReady(10)).toContain(sessionId);
      // It died: once its lease expires, the sweep takes the session over and runs the input.
      await waitFor(
        async () => {
          await sweeper.sweepOnce();
          return (await h.store.loadSession(sessionId))?.headRevision === 2;
        },
        { what: "the sweep to run the dead replica's turn", timeoutMs: 5_000 },
      );
      expect((await h.store.loadSession(sessionId))?.messages.join("")).toContain(
        "started elsewhere",
      );
    });

    it("stays on a session whose input came between a holder's release and its clear", async () => {
      // The release found nothing waiting; a submit then stores an input and marks the session
      // before the holder clears the mark (the submit's replica goes away before it drives).
      const sessionId = `ready-release-${randomUUID()}` as SessionId;
      let interposed = false;
      const afterRelease = async (store: RuntimeStore): Promise<void> => {
        if (interposed) return;
        interposed = true;
        await store.submitInput(draft(sessionId, "second"));
        await h.deps.ready.markReady(sessionId);
      };
      // The holder's clear, once it answered: the mark is looked at only after it.
      let cleared: () => void = () => undefined;
      const clearedAfterRelease = new Promise<void>((resolve) => (cleared = resolve));
      const h = harness({
        wrapStore: (store): RuntimeStore => ({
          ...store,
          commit: async (commit) => {
            const receipt = await store.commit(commit);
            if (receipt.announced?.released === true) await afterRelease(store);
            return receipt;
          },
          releaseIfIdle: async (fence) => {
            const outcome = await store.releaseIfIdle(fence);
            if (outcome.kind === "released") await afterRelease(store);
            return outcome;
          },
        }),
        wrapReady: (ready) => ({
          ...ready,
          markIdle: async (id) => {
            await ready.markIdle(id);
            if (id === sessionId && interposed) cleared();
          },
        }),
      });
      const sweeper = sweeperOf(h);
      const signal = new AbortController().signal;
      await collect(h.runtime.streamTurn(textCommand(sessionId, "first"), signal));
      // A standalone Redis clears in the release's own step: the runtime sends no clear there.
      if (h.store.keepsReadyIndex !== true) await clearedAfterRelease;
      // Marked again after the clear (the second input waits): a sweep finds the session.
      await waitFor(async () => (await h.deps.ready.listReady(10)).includes(sessionId), {
        what: "the session marked ready after the holder's clear",
        timeoutMs: 2_000,
      });
      await waitFor(
        async () => {
          await sweeper.sweepOnce();
          return (await h.store.loadSession(sessionId))?.headRevision === 3;
        },
        { what: "the sweep to run the second input", timeoutMs: 5_000 },
      );
    });

    it("a StreamTurn marks its session ready only once its input is stored", async () => {
      const sessionId = `ready-order-${randomUUID()}` as SessionId;
      const steps: string[] = [];
      const h = harness({
        wrapStore: (store): RuntimeStore => {
          const wrapped: RuntimeStore = {
            ...store,
            submitInput: async (d) => {
              const receipt = await store.submitInput(d);
              steps.push("stored");
              return receipt;
            },
          };
          const start = store.startTurn?.bind(store);
          if (start) {
            wrapped.startTurn = async (d, claim) => {
              const receipt = await start(d, claim);
              steps.push(store.keepsReadyIndex ? "stored and marked" : "stored");
              return receipt;
            };
          }
          return wrapped;
        },
        wrapReady: (ready) => ({
          ...ready,
          markReady: (id) => {
            if (id === sessionId) steps.push("marked");
            return ready.markReady(id);
          },
        }),
      });
      await collect(
        h.runtime.streamTurn(textCommand(sessionId, "hello"), new AbortController().signal),
      );
      // A standalone Redis marks in the start's step; elsewhere the runtime marks after it.
      if (backend.name === "redis") expect(steps[0]).toBe("stored and marked");
      else expect(steps.slice(0, 2)).toEqual(["stored", "marked"]);
    });
  });
}
