// The event writer's group commit: events emitted while a log append is in flight, or in the
// same tick, go out together in the next single append, in the order emitted, and each still
// resolves with its own sequence number.
import { describe, expect, it } from "vitest";
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
