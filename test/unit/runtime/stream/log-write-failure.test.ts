// A turn whose events could not all be written to the log must not commit: the log is how
// clients see the turn, and a store that failed mid-turn may have lost the lease too. The turn
// is run again (same turn id) by the next drive, and commits once, whole.
import { describe, expect, it } from "vitest";
import { TetherError } from "../../../../src/domain/errors.js";
import type { EventLog } from "../../../../src/ports/event-log.js";
import { createEchoProvider } from "../../../../src/providers/scripted.js";
import { decodeMessage } from "../../../../src/runtime/turn/message-codec.js";
import { collect, createRuntimeHarness, textCommand } from "../../../support/runtime-harness.js";

/** Fails the first append that carries a text window, as a Redis connection dropping would. */
function failFirstTextWindow(log: EventLog): EventLog & { failures: () => number } {
  let failures = 0;
  return {
    ...log,
    append(sessionId, entries, fence) {
      if (failures === 0 && entries.some((e) => e.event.type === "text_delta")) {
        failures++;
        return Promise.reject(new TetherError("store_unavailable", "store unavailable: test"));
      }
      return log.append(sessionId, entries, fence);
    },
    failures: () => failures,
  };
}

describe("a log write that fails mid-turn", () => {
  it("keeps the turn from committing; the re-run commits the whole turn once", async () => {
    let wrapped: ReturnType<typeof failFirstTextWindow> | undefined;
    const echo = createEchoProvider({ chunkSize: 10 });
    let modelCalls = 0;
    const h = createRuntimeHarness({
      provider: {
        ...echo,
        call: (request) => {
          modelCalls++;
          return echo.call(request);
        },
      },
      leaseTtlMs: 200,
      wrapLog: (log) => (wrapped = failFirstTextWindow(log)),
    });
    const text = "a reply long enough to need several text windows in the log. ".repeat(5);
    const events = await collect(
      h.runtime.streamTurn(textCommand("log-fails", text), AbortSignal.timeout(10_000)),
    );
    expect(wrapped?.failures()).toBe(1);
    // One model call for the attempt the failed write stopped, one for the re-run.
    expect(modelCalls).toBe(2);

    const completed = events.filter((e) => e.event.type === "turn_completed");
    expect(completed).toHaveLength(1);
    expect(completed[0]?.event).toMatchObject({
      outcome: { kind: "finished", text },
      headRevision: 2,
    });
    const snapshot = await h.store.loadSession("log-fails" as never);
    expect(snapshot?.headRevision).toBe(2);
    expect(snapshot?.messages.map((m) => decodeMessage(m).role)).toEqual(["user", "assistant"]);

    // The log shows the first attempt starting, then the re-run of the same turn to its end.
    const read = await h.log.read("log-fails" as never, 0, 1_000);
    const starts = read.entries.filter((e) => e.event.type === "turn_started");
    expect(starts).toHaveLength(2);
    expect(starts[1]?.turnId).toBe(starts[0]?.turnId);
    expect(read.entries.filter((e) => e.event.type === "turn_completed")).toHaveLength(1);
  });
});
