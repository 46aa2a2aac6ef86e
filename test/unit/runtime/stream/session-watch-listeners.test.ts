// The watch's driver over real signals and a memory log: what it asks of the log while its
// replica drives the session (nothing), and that its waits leave no listener behind.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { CursoredEvent } from "../../../../src/domain/session-events.js";
import type { EventLog } from "../../../../src/ports/event-log.js";
import type { RuntimeStore } from "../../../../src/ports/runtime-store.js";
import { createSessionBus } from "../../../../src/runtime/stream/session-bus.js";
import { watchSession } from "../../../../src/runtime/stream/session-watch.js";
import { createLatch } from "../../../../src/runtime/stream/signals.js";
import { createMemoryEventLog } from "../../../../src/store/memory/event-log.js";

const sessionId = "watched" as SessionId;
const M = 2 ** 20;
const store = { loadSession: () => Promise.resolve(undefined) } as unknown as RuntimeStore;
const listeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

/**
 * A memory log that counts what the watch asks of it. Its waits hand over what they saw, as
 * the Redis log's blocking read does (the memory log's own hand over nothing).
 */
function countingLog(): EventLog & { reads: number; waits: number } {
  const inner = createMemoryEventLog();
  const log = {
    ...inner,
    reads: 0,
    waits: 0,
    read: (...args: Parameters<EventLog["read"]>) => {
      log.reads++;
      return inner.read(...args);
    },
    waitForEntries: async (...args: Parameters<EventLog["waitForEntries"]>) => {
      log.waits++;
      const [id, afterSeq, , signal, limit] = args;
      await inner.waitForEntries(...args);
      return signal.aborted ? undefined : (await inner.read(id, afterSeq, limit ?? 256)).entries;
    },
  };
  return log;
}

/**
 * Whether the replica holds the session, as a watch asks it at each idle; `nextIdle()` settles
 * at the watch's next idle after the call, so a test publishes only once the watch waits.
 */
function observedHold(hold: AbortController, held: () => boolean = () => true) {
  let idled = createLatch<void>();
  return {
    drivenHere: {
      holdOf: () => {
        idled.settle();
        return held() ? hold.signal : undefined;
      },
    },
    nextIdle(): Promise<void> {
      idled = createLatch<void>();
      return idled.promise;
    },
  };
}

const started = (seq: number): CursoredEvent => ({
  cursor: seq * M,
  sessionId,
  turnId: "t",
  event: { type: "turn_started", inputIds: [`i${seq}`], turnIndex: seq },
});

describe("a watch of a session its replica drives", () => {
  it("neither reads nor waits on the log, and adds no listener per wait", async () => {
    const log = countingLog();
    const bus = createSessionBus();
    const call = new AbortController();
    const stop = new AbortController();
    const hold = new AbortController();
    const observed = observedHold(hold);
    const startsAt = createLatch<{ cursor: number; readLog: boolean }>();
    const watcher = watchSession(
      { log, bus, store },
      {
        sessionId,
        publicSessionId: "pub",
        afterCursor: 0,
        signal: call.signal,
        stop: stop.signal,
        startsAt: startsAt.promise,
        drivenHere: observed.drivenHere,
      },
    );
    startsAt.settle({ cursor: 0, readLog: false });
    for (let seq = 1; seq <= 100; seq++) {
      const idle = observed.nextIdle();
      const next = watcher.next();
      await idle;
      bus.publish(started(seq));
      expect(await next).toEqual({ done: false, value: { ...started(seq), sessionId: "pub" } });
      // Paused at its yield, as after the first event: the call is heard by the link that ends
      // its log waits and by the wake of its waits, the stop by that wake, and one listener
      // waits for the hold's end. A wait adds none of its own.
      expect([listeners(call.signal), listeners(stop.signal), listeners(hold.signal)]).toEqual([
        2, 1, 1,
      ]);
    }
    expect([log.reads, log.waits]).toEqual([0, 0]);
    await watcher.return(undefined);
    expect([listeners(call.signal), listeners(stop.signal), listeners(hold.signal)]).toEqual([
      0, 0, 0,
    ]);
  });

  it("reads the log once when the hold ends, and waits on it from then on", async () => {
    const log = countingLog();
    const bus = createSessionBus();
    const call = new AbortController();
    const hold = new AbortController();
    let held = true;
    const observed = observedHold(hold, () => held);
    const watcher = watchSession(
      { log, bus, store },
      {
        sessionId,
        publicSessionId: "pub",
        afterCursor: 0,
        signal: call.signal,
        pollMs: 60_000,
        drivenHere: observed.drivenHere,
      },
    );
    const idle = observed.nextIdle();
    const first = watcher.next();
    await idle;
    // The driving replica appends, then publishes.
    await log.append(sessionId, [{ turnId: "t", event: started(1).event }]);
    bus.publish(started(1));
    expect((await first).value?.cursor).toBe(M);
    expect([log.reads, log.waits]).toEqual([1, 0]);
    // Another replica takes over and writes entry 2: only the log has it.
    const second = watcher.next();
    held = false;
    hold.abort();
    await log.append(sessionId, [{ turnId: "t", event: started(2).event }]);
    expect((await second).value?.cursor).toBe(2 * M);
    const third = watcher.next();
    await log.append(sessionId, [{ turnId: "t", event: started(3).event }]);
    expect((await third).value?.cursor).toBe(3 * M);
    // The start and the hold's end read the log; what came later came with the waits.
    expect(log.reads).toBe(2);
    expect(log.waits).toBeGreaterThan(0);
    call.abort();
    expect(await watcher.next()).toEqual({ done: true, value: undefined });
  });

  it("makes one last read after a stop, then ends", async () => {
    const log = countingLog();
    const bus = createSessionBus();
    const stop = new AbortController();
    const watcher = watchSession(
      { log, bus, store },
      {
        sessionId,
        publicSessionId: "pub",
        afterCursor: 0,
        signal: new AbortController().signal,
        stop: stop.signal,
        drivenHere: { holdOf: () => new AbortController().signal },
      },
    );
    const first = watcher.next();
    bus.publish(started(1));
    expect((await first).value?.cursor).toBe(M);
    // Landed in the log but never published here (a write the bus did not carry).
    await log.append(sessionId, [{ turnId: "t", event: started(1).event }]);
    await log.append(sessionId, [{ turnId: "t", event: started(2).event }]);
    const next = watcher.next();
    stop.abort();
    expect((await next).value?.cursor).toBe(2 * M);
    expect(await watcher.next()).toEqual({ done: true, value: undefined });
    expect([log.reads, log.waits]).toEqual([2, 0]);
  });
});
