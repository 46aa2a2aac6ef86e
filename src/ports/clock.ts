// Time as a port: the engine and the in-memory store read time and wait only through these,
// so tests can drive them with a manual clock and the engine stays free of timers.

/** Wall-clock milliseconds since the Unix epoch. */
export interface Clock {
  now(): number;
}

/**
 * Waits `ms` milliseconds. Rejects with the signal's reason as soon as `signal` aborts, so a
 * cancelled turn never sits out a backoff.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const systemClock: Clock = { now: () => Date.now() };

export const systemSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new Error("aborted");
}
