// A watcher on the driving replica delivers live text deltas across a window boundary without
// waiting for the closed window's log entry, and still delivers nothing twice once it lands.
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { CursoredEvent } from "../../../../src/domain/session-events.js";
import type { EventLog } from "../../../../src/ports/event-log.js";
import type { RuntimeStore } from "../../../../src/ports/runtime-store.js";
import { createEventWriter } from "../../../../src/runtime/stream/event-writer.js";
import { createSessionBus, type SessionBus } from "../../../../src/runtime/stream/session-bus.js";
import { watchSession, type WatchOptions } from "../../../../src/runtime/stream/session-watch.js";
import { createMemoryEventLog } from "../../../../src/store/memory/event-log.js";
import { usageReported } from "../../../support/session-events.js";
import { waitFor } from "../../../support/wait-for.js";

const sessionId = "live-window" as SessionId;
const usage = usageReported();

/** The store a watch reads only for a gap, which these tests never reach. */
const store = { loadSession: () => Promise.resolve(undefined) } as unknown as RuntimeStore;

/** A watch of the session from its start, as an iterator. */
function watchFromStart(
  log: EventLog,
  bus: SessionBus,
  signal: AbortSignal,
  extra: Partial<WatchOptions> = {},
): AsyncIterator<CursoredEvent> {
  return watchSession(
    { log, bus, store },
    { sessionId, publicSessionId: "live-window", afterCursor: 0, signal, ...extra },
  )[Symbol.asyncIterator]();
}

/** A memory log whose appends wait until `release()`: the shared log lags the live bus. */
function laggingLog(): EventLog & { release(): void } {
  const inner = createMemoryEventLog();
  let open: () => void = () => undefined;
  let gate = new Promise<void>((r) => (open = r));
  return {
    ...inner,
    append: async (...args) => {
      await gate;
      return inner.append(...args);
    },
    release() {
      open();
      gate = Promise.resolve();
    },
  };
}

/** A bus that counts its listeners, so a test can wait until a watcher listens. */
function countingBus(): SessionBus & { listeners(): number } {
  const inner = createSessionBus();
  let listening = 0;
  return {
    publish: (event) => inner.publish(event),
    subscribe: (id, listener) => {
      listening++;
      const unsubscribe = inner.subscribe(id, listener);
      return () => {
        listening--;
        unsubscribe();
      };
    },
    listeners: () => listening,
  };
}

/** Until a watcher listens on `bus`. */
const listened = (bus: ReturnType<typeof countingBus>) =>
  waitFor(() => bus.listeners() > 0, { what: "the watcher to listen on the bus" });

async function take(events: AsyncIterator<CursoredEvent>, count: number, withinMs: number) {
  const out: CursoredEvent[] = [];
  const deadline = new Promise<"late">((r) => setTimeout(() => r("late"), withinMs).unref());
  while (out.length < count) {
    const next = await Promise.race([events.next(), deadline]);
    if (next === "late" || next.done === true) break;
    out.push(next.value);
  }
  return out;
}

describe("live deltas across a text window boundary", () => {
  it("arrive while the closed window is still on its way to the log, and never twice", async () => {
    const log = laggingLog();
    const bus = countingBus();
    const stop = new AbortController();
    const watcher = watchFromStart(log, bus, stop.signal);
    const first = take(watcher, 3, 1_000);
    await listened(bus);
    const writer = createEventWriter({
      log,
      bus,
      sessionId,
      turnId: "t1",
      lastSeq: 0,
      windowChars: 4,
    });
    // "abcd" fills window 1, which closes (its append waits on the gate); "ef" and "gh" open
    // window 2 on the bus only.
    await writer.emit({ type: "text_delta", text: "abcd" });
    await writer.emit({ type: "text_delta", text: "ef" });
    await writer.emit({ type: "text_delta", text: "gh" });
    const live = await first;
    expect(live.map((e) => e.event)).toEqual([
      { type: "text_delta", text: "abcd" },
      { type: "text_delta", text: "ef" },
      { type: "text_delta", text: "gh" },
    ]);
    // The log catches up with both windows; the watcher must not repeat any of it.
    log.release();
    await writer.emit(usage);
    await writer.flush();
    const rest = await take(watcher, 1, 1_000);
    expect(rest.map((e) => e.event.type)).toEqual(["usage_reported"]);
    stop.abort();
  });
});

describe("a watcher whose call ends during a log read", () => {
  it("stops at once instead of sleeping through its poll interval", async () => {
    const inner = createMemoryEventLog();
    let reads = 0;
    let waits = 0;
    let readStarted: () => void = () => undefined;
    const secondRead = new Promise<void>((r) => (readStarted = r));
    const stop = new AbortController();
    const log: EventLog = {
      ...inner,
      read: async (...args) => {
        // The second read is still on its way when the call ends.
        if (++reads === 2) {
          readStarted();
          await new Promise<void>((r) => stop.signal.addEventListener("abort", () => r()));
        }
        return inner.read(...args);
      },
      waitForEntries: (...args) => {
        waits++;
        return inner.waitForEntries(...args);
      },
    };
    const watcher = watchFromStart(log, createSessionBus(), stop.signal, { pollMs: 60_000 });
    const ended = watcher.next();
    // News in the log wakes the watcher's wait, which reads the log a second time.
    await waitFor(() => waits > 0, { what: "the watcher to wait on the log" });
    await inner.append(sessionId, [{ turnId: "t1", event: { type: "text_delta", text: "x" } }]);
    await secondRead;
    stop.abort();
    const outcome = await Promise.race([
      ended,
      new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), 5_000).unref()),
    ]);
    expect(outcome).toEqual({ done: true, value: undefined });
  });
});

describe("a watcher of a session its own replica drives", () => {
  it("waits on the bus alone, and reads the log for what the bus showed before it listened", async () => {
    const inner = createMemoryEventLog();
    let waits = 0;
    const log: EventLog = {
      ...inner,
      waitForEntries: (...args) => {
        waits++;
        return inner.waitForEntries(...args);
      },
    };
    const bus = countingBus();
    const stop = new AbortController();
    const hold = new AbortController();
    const watcher = watchFromStart(log, bus, stop.signal, {
      drivenHere: { holdOf: () => (hold.signal.aborted ? undefined : hold.signal) },
    });
    const writer = createEventWriter({ log, bus, sessionId, turnId: "t1", lastSeq: 0 });
    // Published before the watcher listened: only the log has it.
    await writer.emit({ type: "turn_started", inputIds: ["i1"], turnIndex: 1 });
    const got = take(watcher, 3, 2_000);
    await listened(bus);
    await writer.emit({ type: "text_delta", text: "hello" });
    await writer.flush();
    await writer.emit(usage);
    expect((await got).map((e) => e.event.type)).toEqual([
      "turn_started",
      "text_delta",
      "usage_reported",
    ]);
    expect(waits).toBe(0);
    // Driven elsewhere: an append that never reaches this bus comes through the log.
    hold.abort();
    await inner.append(sessionId, [{ turnId: "t2", event: usage }]);
    const later = await take(watcher, 1, 2_000);
    expect(later.map((e) => e.turnId)).toEqual(["t2"]);
    // From then on it waits on the log again.
    const waitsBefore = waits;
    const next = take(watcher, 1, 2_000);
    await waitFor(() => waits > waitsBefore, { what: "the watcher to wait on the log" });
    await inner.append(sessionId, [{ turnId: "t3", event: usage }]);
    expect((await next).map((e) => e.turnId)).toEqual(["t3"]);
    expect(waits).toBeGreaterThan(0);
    stop.abort();
  });

  it("reads the log when an event does not follow what it delivered", async () => {
    const lagging = laggingLog();
    let reads = 0;
    const log: EventLog & { release(): void } = {
      ...lagging,
      read: (...args) => {
        reads++;
        return lagging.read(...args);
      },
    };
    const bus = countingBus();
    const stop = new AbortController();
    const writer = createEventWriter({ log, bus, sessionId, turnId: "t1", lastSeq: 0 });
    // Published before the watcher listens, and its window not in the log yet when it starts.
    await writer.emit({ type: "text_delta", text: "early" });
    const watcher = watchFromStart(log, bus, stop.signal, {
      pollMs: 60_000,
      drivenHere: { holdOf: () => new AbortController().signal },
    });
    const got = take(watcher, 2, 2_000);
    // It listens and has read the log, which does not hold the early window yet.
    await listened(bus);
    await waitFor(() => reads > 0, { what: "the watcher's first read" });
    log.release();
    await writer.emit(usage);
    expect((await got).map((e) => e.event)).toEqual([{ type: "text_delta", text: "early" }, usage]);
    stop.abort();
  });
});
