// Turn starts paced per event-loop iteration (ADR 0025): a burst of turns on one replica starts
// over several iterations, at most N per iteration, and every turn still runs to its end.
import { afterEach, describe, expect, it } from "vitest";
import type { ModelProvider } from "../../../src/ports/model-provider.js";
import { collect, createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";

/** Counts iterations of the event loop (an immediate per iteration) while it runs. */
function iterationCounter() {
  let iteration = 0;
  let running = true;
  const tick = (): void => {
    if (!running) return;
    iteration++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => iteration, stop: () => (running = false) };
}

/** Answers "ok" and records the iteration each model call began in. */
function recordingProvider(now: () => number, calls: number[]): ModelProvider {
  return {
    name: "recording",
    capabilities: { images: false },
    async *call() {
      calls.push(now());
      yield { type: "text_delta", text: "ok" };
      return { fullText: "ok", parts: [{ type: "text", text: "ok" }] };
    },
  };
}

describe("turn starts paced per event-loop iteration", () => {
  const counters: ReturnType<typeof iterationCounter>[] = [];
  afterEach(() => {
    for (const c of counters.splice(0)) c.stop();
  });

  async function burst(turnStartsPerIteration: number | undefined, turns: number) {
    const counter = iterationCounter();
    counters.push(counter);
    const calls: number[] = [];
    const { runtime } = createRuntimeHarness({
      provider: recordingProvider(counter.now, calls),
      ...(turnStartsPerIteration !== undefined && { turnStartsPerIteration }),
    });
    const ends = await Promise.all(
      Array.from({ length: turns }, (_, i) =>
        collect(runtime.streamTurn(textCommand(`paced-${i}`, "go"), AbortSignal.timeout(10_000))),
      ),
    );
    const perIteration = new Map<number, number>();
    for (const at of calls) perIteration.set(at, (perIteration.get(at) ?? 0) + 1);
    return { ends, calls, perIteration };
  }

  it("starts at most N turns' model calls per iteration, and finishes every turn", async () => {
    const { ends, calls, perIteration } = await burst(2, 9);
    expect(calls).toHaveLength(9);
    expect(Math.max(...perIteration.values())).toBeLessThanOrEqual(2);
    expect(perIteration.size).toBeGreaterThanOrEqual(5);
    for (const events of ends) {
      const last = events.at(-1)?.event;
      expect(last?.type === "turn_completed" && last.outcome.kind).toBe("finished");
    }
  });

  it("without pacing, the same burst starts its model calls in fewer iterations", async () => {
    const paced = await burst(2, 9);
    const unpaced = await burst(undefined, 9);
    expect(unpaced.calls).toHaveLength(9);
    expect(Math.max(...unpaced.perIteration.values())).toBeGreaterThan(2);
    expect(unpaced.perIteration.size).toBeLessThan(paced.perIteration.size);
  });
});
