// Paces turn starts across iterations of the event loop. A turn's start (its claims, the
// transcript, the engine, the first model call, the stream's set-up) is the costliest stretch
// of its life on the CPU; a hundred turns that start together (a burst of clients, schedules
// due on the same minute, a replica taking over a dead one's sessions) would otherwise run all
// their starts in one iteration, and every running turn's deltas would wait behind them. At most
// `perIteration` turns start in one iteration; the others start in the iterations after, in the
// order they asked. The running turns' deltas go out in between (ADR 0025).

export interface StartPacer {
  /**
   * Undefined when the turn may start now; otherwise a promise that settles when its slot
   * comes, in a later iteration.
   */
  slot(): Promise<void> | undefined;
}

/** Never waits: what `perIteration` 0 (pacing off) gives. */
const unpaced: StartPacer = { slot: () => undefined };

export function createStartPacer(perIteration: number): StartPacer {
  if (perIteration === 0) return unpaced;
  let startedThisIteration = 0;
  let nextIterationAsked = false;
  const waiting: (() => void)[] = [];

  // Runs once per iteration while turns start (an immediate: after this iteration's I/O, so a
  // running turn's delta is written before the next batch of starts runs).
  const nextIteration = (): void => {
    nextIterationAsked = false;
    startedThisIteration = 0;
    while (waiting.length > 0 && startedThisIteration < perIteration) {
      startedThisIteration++;
      waiting.shift()?.();
    }
    if (startedThisIteration > 0) askNextIteration();
  };
  const askNextIteration = (): void => {
    if (nextIterationAsked) return;
    nextIterationAsked = true;
    setImmediate(nextIteration);
  };

  return {
    slot() {
      askNextIteration();
      if (waiting.length === 0 && startedThisIteration < perIteration) {
        startedThisIteration++;
        return undefined;
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}
