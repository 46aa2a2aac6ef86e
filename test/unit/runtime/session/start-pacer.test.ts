// The start pacer: at most N turn starts per event-loop iteration, the rest in later ones, in
// the order they asked.
import { describe, expect, it } from "vitest";
import { createStartPacer } from "../../../../src/runtime/session/start-pacer.js";

/**
 * Until the pacer's next immediate has run: an immediate asked after the pacer's runs after it,
 * in the same iteration, and what the pacer's settled has run by then.
 */
const nextIteration = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Asks for `count` slots at once; records the order in which they start. */
function askAll(pacer: ReturnType<typeof createStartPacer>, count: number) {
  const started: number[] = [];
  for (let i = 0; i < count; i++) {
    const slot = pacer.slot();
    if (slot === undefined) started.push(i);
    else void slot.then(() => started.push(i));
  }
  return started;
}

describe("createStartPacer", () => {
  it("starts at most N turns per iteration and the rest in the next ones, in order", async () => {
    const pacer = createStartPacer(2);
    const started = askAll(pacer, 7);
    // The first two start in the asking iteration, without waiting.
    expect(started).toEqual([0, 1]);
    await nextIteration();
    expect(started).toEqual([0, 1, 2, 3]);
    await nextIteration();
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    await nextIteration();
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it("counts afresh in a later iteration: a lone start never waits", async () => {
    const pacer = createStartPacer(1);
    expect(pacer.slot()).toBeUndefined();
    await nextIteration();
    expect(pacer.slot()).toBeUndefined();
    // A second start in the same iteration waits for the next one.
    const waits = pacer.slot();
    expect(waits).toBeInstanceOf(Promise);
    await nextIteration();
    await waits;
    await nextIteration();
    expect(pacer.slot()).toBeUndefined();
  });

  it("a start asked while others wait queues behind them, even with room left", async () => {
    const pacer = createStartPacer(2);
    const first = askAll(pacer, 5);
    await nextIteration();
    // Slots 2 and 3 took this iteration's room; the late ask waits behind slot 4.
    const late = pacer.slot();
    expect(late).toBeInstanceOf(Promise);
    const order: string[] = [];
    void late?.then(() => order.push("late"));
    await nextIteration();
    expect(first).toEqual([0, 1, 2, 3, 4]);
    expect(order).toEqual(["late"]);
  });

  it("0 turns the pacing off: every start goes at once", () => {
    const pacer = createStartPacer(0);
    for (let i = 0; i < 1000; i++) expect(pacer.slot()).toBeUndefined();
  });
});
