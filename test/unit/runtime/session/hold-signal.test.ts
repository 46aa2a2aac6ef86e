// The driver tells a watch that this replica holds a session through a signal per hold: there
// while the turn runs under the lease, aborted when the lease is let go, gone after.
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../../src/domain/ids.js";
import type { ModelProvider } from "../../../../src/ports/model-provider.js";
import { createEchoProvider } from "../../../../src/providers/scripted.js";
import { createLatch } from "../../../../src/runtime/stream/signals.js";
import { createRuntimeHarness, textCommand } from "../../../support/runtime-harness.js";

/** A provider whose calls answer only once `gate` settles: the turn holds its lease till then. */
function gated(inner: ModelProvider, gate: Promise<void>): ModelProvider {
  return {
    name: inner.name,
    capabilities: inner.capabilities,
    call(request) {
      const call = inner.call(request);
      let opened = false;
      return {
        async next() {
          if (!opened) {
            opened = true;
            await gate;
          }
          return call.next();
        },
      };
    },
  };
}

describe("the hold signal of a driven session", () => {
  it("is there while the turn runs, aborts when the lease is released, and is gone after", async () => {
    const gate = createLatch<void>();
    const { runtime } = createRuntimeHarness({
      provider: gated(createEchoProvider(), gate.promise),
    });
    const sessionId = "held-1" as SessionId;
    expect(runtime.driver.holdOf(sessionId)).toBeUndefined();
    const stream = runtime
      .streamTurn(textCommand(sessionId, "hello"), new AbortController().signal)
      [Symbol.asyncIterator]();
    expect((await stream.next()).value?.event.type).toBe("turn_started");
    const hold = runtime.driver.holdOf(sessionId);
    expect(hold?.aborted).toBe(false);
    const released = new Promise<void>((resolve) =>
      hold?.addEventListener("abort", () => resolve(), { once: true }),
    );
    gate.settle();
    const rest: string[] = [];
    for (let step = await stream.next(); step.done !== true; step = await stream.next()) {
      rest.push(step.value.event.type);
    }
    expect(rest.at(-1)).toBe("turn_completed");
    await released;
    expect(runtime.driver.holdOf(sessionId)).toBeUndefined();
  });
});
