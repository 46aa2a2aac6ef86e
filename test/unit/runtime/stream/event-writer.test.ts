// The event writer's group commit: events emitted while a log append is in flight, or in the
// same tick, go out together in the next single append, in the order emitted, and each still
// resolves with its own sequence number.
import { describe, expect, it, vi } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { EventLog } from "../../../../src/ports/event-log.js";
import { entryCursor } from "../../../../src/runtime/stream/cursor.js";
import { createEventWriter } from "../../../../src/runtime/stream/event-writer.js";
import { createSessionBus } from "../../../../src/runtime/stream/session-bus.js";
import { createMemoryEventLog } from "../../../../src/store/memory/event-log.js";
import { usageReported } from "../../../support/session-events.js";

const sessionId = "group-commit" as SessionId;
const usage = usageReported();

/** A memory log that records each append's event types, and holds appends until released. */
function recordingLog(): EventLog & { calls: string[][]; hold(): void; release(): void } {
  const inner = createMemoryEventLog();
  const calls: string[][] = [];
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  return {
    ...inner,
    calls,
    async append(id, entries, fence) {
      calls.push(entries.map((e) => e.event.type));
      await gate;
      return inner.append(id, entries, fence);
    },
    hold() {
      gate = new Promise((r) => (open = r));
    },
    release() {
      open();
      gate = Promise.resolve();
    },
  };
}

describe("event writer group commit", () => {
  it("what is emitted while an append is in flight goes in one append, in order", async () => {
    const log = recordingLog();
    const writer = createEventWriter({
      log,
      bus: createSessionBus(),
      sessionId,
      turnId: "turn-1",
      lastSeq: 0,
    });
    log.hold();
    const started = writer.emit({ type: "turn_started", inputIds: [], turnIndex: 1 });
    await Promise.resolve();
    await Promise.resolve();
    // Emitted while turn_started is in flight: a text window, the usage that closes it, more.
    void writer.emit({ type: "text_delta", text: "hello" });
    const usageCursor = writer.emit(usage);
    const second = writer.emit(usageReported(2));
    log.release();
    expect(await started).toBe(entryCursor(1));
    expect(await usageCursor).toBe(entryCursor(3));
    await second;
    await writer.flush();
    expect(log.calls).toEqual([
      ["turn_started"],
      ["text_delta", "usage_reported", "usage_reported"],
    ]);
    const read = await log.read(sessionId, 0, 10);
    expect(read.entries.map((e) => [e.seq, e.event.type])).toEqual([
      [1, "turn_started"],
      [2, "text_delta"],
      [3, "usage_reported"],
      [4, "usage_reported"],
    ]);
  });

  it("a window and the event that closes it in the same tick cost one append", async () => {
    const log = recordingLog();
    const writer = createEventWriter({
      log,
      bus: createSessionBus(),
      sessionId,
      turnId: "turn-2",
      lastSeq: 0,
    });
    void writer.emit({ type: "text_delta", text: "answer" });
    await writer.emit(usage);
    await writer.flush();
    expect(log.calls).toEqual([["text_delta", "usage_reported"]]);
  });

  it("a writer that is not told where the log ends learns it from its first append", async () => {
    const log = recordingLog();
    await log.append(sessionId, [{ turnId: "earlier", event: usage }]);
    await log.append(sessionId, [{ turnId: "earlier", event: usage }]);
    const bus = createSessionBus();
    const live: number[] = [];
    bus.subscribe(sessionId, (e) => live.push(e.cursor));
    const writer = createEventWriter({ log, bus, sessionId, turnId: "turn-3" });
    expect(await writer.emit({ type: "turn_started", inputIds: [], turnIndex: 1 })).toBe(
      entryCursor(3),
    );
    // The live delta already carries the cursor of the window it lands in: entry 4.
    expect(await writer.emit({ type: "text_delta", text: "hi" })).toBe(entryCursor(3) + 2);
    await writer.flush();
    expect(live).toEqual([entryCursor(3), entryCursor(3) + 2, entryCursor(4)]);
  });
});

describe("event writer holding events for the commit (ADR 0040)", () => {
  const started = { type: "turn_started" as const, inputIds: [], turnIndex: 1 };

  function holding(log: EventLog, windowMs = 60_000) {
    const bus = createSessionBus();
    const live: [number, string][] = [];
    bus.subscribe(sessionId, (e) => live.push([e.cursor, e.event.type]));
    const writer = createEventWriter({ log, bus, sessionId, turnId: "held", hold: true, windowMs });
    return { writer, live };
  }

  it("writes turn_started at once, holds the window and usage, and shows no entry of theirs before it lands", async () => {
    const log = recordingLog();
    const { writer, live } = holding(log);
    expect(await writer.emit(started)).toBe(entryCursor(1));
    await writer.emit({ type: "text_delta", text: "hello" });
    expect(await writer.emit(usage)).toBe(entryCursor(3));
    const pending = await writer.takePending();
    expect(log.calls).toEqual([["turn_started"]]);
    expect(pending.map((p) => [p.seq, p.event.type])).toEqual([
      [2, "text_delta"],
      [3, "usage_reported"],
    ]);
    // The start as it landed and the live piece; the window and the usage wait for the commit.
    expect(live).toEqual([
      [entryCursor(1), "turn_started"],
      [entryCursor(1) + 5, "text_delta"],
    ]);
  });

  it("hands over the open window as an entry", async () => {
    const log = recordingLog();
    const { writer } = holding(log);
    await writer.emit(started);
    await writer.emit({ type: "text_delta", text: "tail" });
    expect(await writer.takePending()).toEqual([
      { event: { type: "text_delta", text: "tail" }, seq: 2 },
    ]);
    expect(log.calls).toEqual([["turn_started"]]);
  });

  it("an event that is not held writes what is held ahead of it, in one append, and the bus gets each as it lands", async () => {
    const log = recordingLog();
    const { writer, live } = holding(log);
    await writer.emit(started);
    await writer.emit({ type: "text_delta", text: "calling" });
    await writer.emit(usage);
    const call = {
      type: "tool_call_started" as const,
      callId: "c1",
      toolName: "t",
      argumentsJson: "{}",
      idempotencyKey: "k",
    };
    expect(await writer.emit(call)).toBe(entryCursor(4));
    expect(log.calls).toEqual([
      ["turn_started"],
      ["text_delta", "usage_reported", "tool_call_started"],
    ]);
    expect(await writer.takePending()).toEqual([]);
    expect(live).toEqual([
      [entryCursor(1), "turn_started"],
      [entryCursor(1) + 7, "text_delta"],
      [entryCursor(2), "text_delta"],
      [entryCursor(3), "usage_reported"],
      [entryCursor(4), "tool_call_started"],
    ]);
  });

  it("what is held is written within one window interval when nothing else writes", async () => {
    const log = recordingLog();
    const { writer, live } = holding(log, 5);
    await writer.emit(started);
    await writer.emit(usage);
    await vi.waitFor(() => expect(log.calls).toEqual([["turn_started"], ["usage_reported"]]));
    await vi.waitFor(() => expect(live.at(-1)).toEqual([entryCursor(2), "usage_reported"]));
    expect(await writer.takePending()).toEqual([]);
  });

  it("a held event whose write fails never reaches the bus", async () => {
    const log = recordingLog();
    let fail = false;
    const failing: EventLog = {
      ...log,
      append: (id, entries, fence) =>
        fail ? Promise.reject(new Error("store unavailable")) : log.append(id, entries, fence),
    };
    const { writer, live } = holding(failing);
    await writer.emit(started);
    await writer.emit(usage);
    fail = true;
    await expect(writer.flush()).rejects.toThrow("store unavailable");
    expect(live).toEqual([[entryCursor(1), "turn_started"]]);
  });
});
