// Waiting as a port: the engine never touches timers, it asks for a sleep (retry backoff, tool
// timeouts), and tests or benchmarks substitute an instant or scripted one.

/**
 * Resolves after `ms` milliseconds. Rejects with the signal's reason as soon as `signal` aborts,
 * so a cancelled turn never sits out a backoff.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const systemSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
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
