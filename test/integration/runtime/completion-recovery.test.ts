// A replica that commits a turn and stops before appending its turn_completed (a crash, a stall
// past its lease, a lost Redis connection) leaves a committed turn no client sees end. The next
// lease holder announces it, so a client waiting on the turn still reaches its end. A store that
// announces in the commit's step (ADR 0011) has no such window; replica A here uses one that does
// not (as the wire's does not), so the recovery stays covered.
import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import type { EventLog } from "../../../src/ports/event-log.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { collect, createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";
import { withoutAnnouncements } from "../../support/unannouncing-store.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

/**
 * A log that loses the first turn_completed append, as if the replica died right after its
 * commit. Only the first: whichever holder recovers the turn next (A itself, whose waiting client
 * drives the session again under a fresh lease, or B) must be able to announce it.
 */
function losesCompletions(log: EventLog): EventLog {
  let lost = false;
  return {
    ...log,
    append(sessionId, entries, fence) {
      if (!lost && entries.some((e) => e.event.type === "turn_completed")) {
        lost = true;
        return Promise.reject(new Error("connection lost after the commit"));
      }
      return log.append(sessionId, entries, fence);
    },
  };
}

describe("completion of a committed but unannounced turn (Redis)", () => {
  it("the next lease holder announces it once, and later turns continue from it", async () => {
    const namespace = `announce-${randomUUID()}`;
    const a = createRuntimeHarness({
      provider: createEchoProvider(),
      redis,
      namespace,
      ownerId: "replica-a",
      wrapLog: losesCompletions,
      wrapStore: withoutAnnouncements,
      // A leaves its lease to expire rather than releasing it (a released session counts as
      // having nothing to announce), so B can take over after this TTL.
      leaseTtlMs: 300,
    });
    const b = createRuntimeHarness({
      provider: createEchoProvider(),
      redis,
      namespace,
      ownerId: "replica-b",
    });
    const sessionId = "announce-me" as SessionId;

    // A commits the turn but its announcement is lost. Its waiting client drives the session
    // again: A takes a fresh lease (never re-entering the one its hold left) and, as any next
    // holder, announces the committed turn as recovered; otherwise B does below.
    await collect(
      a.runtime.streamTurn(textCommand(sessionId, "first words"), AbortSignal.timeout(1_500)),
    ).catch(() => []);
    expect((await b.store.loadSession(sessionId))?.headRevision).toBe(2);
    // A never releases the lease while the completion is missing (had it released, B would
    // take the session as having nothing to announce); once A's client is gone, it expires.
    await waitFor(async () => (await a.store.currentLease(sessionId)) === undefined, {
      timeoutMs: 5_000,
      what: "A's lease to expire",
    });

    // B takes the session (as the sweep would) and announces the committed turn.
    const watch = collect(
      b.runtime.watch(sessionId, sessionId, 0, true, AbortSignal.timeout(10_000)),
    );
    expect((await b.runtime.driver.ensureDriven(sessionId)).kind).toBe("driving");
    const seen = await watch;
    const done = seen.at(-1);
    expect(done?.event).toMatchObject({
      type: "turn_completed",
      headRevision: 2,
      recovered: true,
      outcome: { kind: "finished", reason: "assistant_message", text: "first words" },
    });
    expect(done?.turnId).toBe(seen.find((e) => e.event.type === "turn_started")?.turnId);

    // The next turn runs on B as revision 3; the log announces 2 and 3, each once (the first
    // input created the session at revision 1).
    const next = await collect(
      b.runtime.streamTurn(textCommand(sessionId, "second words"), AbortSignal.timeout(10_000)),
    );
    expect(next.at(-1)?.event).toMatchObject({ type: "turn_completed", headRevision: 3 });
    const announced = (await b.log.read(sessionId, 0, 100)).entries.flatMap((e) =>
      e.event.type === "turn_completed" ? [e.event.headRevision] : [],
    );
    expect(announced).toEqual([2, 3]);
    await a.runtime.drain(1_000);
    await b.runtime.drain(1_000);
  });
});
