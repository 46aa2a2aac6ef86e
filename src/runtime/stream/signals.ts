// Small tools over abort signals and one-shot values, so the watch, the driver and the facade
// share one way to listen, link and wait, each removing its listeners when it is done.

/** Removes what `onAbort` or a link added. */
export type Dispose = () => void;

/**
 * Calls `fn` once when `signal` aborts (at once if it already has); the returned dispose
 * removes the listener, so a listener that is no longer wanted does not stay on a long-lived
 * signal.
 */
export function onAbort(signal: AbortSignal, fn: () => void): Dispose {
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}

/**
 * An abort controller that also aborts, with the same reason, when any of `signals` does. Its
 * own abort (or the first input's) removes its listeners from every input: unlike
 * `AbortSignal.any`, a linked controller that ended holds on to nothing.
 */
export function createLinkedAbortController(
  ...signals: readonly (AbortSignal | undefined)[]
): AbortController {
  const controller = new AbortController();
  const disposers: Dispose[] = [];
  const release = (): void => {
    for (const dispose of disposers.splice(0)) dispose();
  };
  controller.signal.addEventListener("abort", release, { once: true });
  for (const signal of signals) {
    if (signal === undefined || controller.signal.aborted) continue;
    disposers.push(onAbort(signal, () => controller.abort(signal.reason)));
  }
  return controller;
}

export type Waited<T> = { aborted: false; value: T } | { aborted: true };

/**
 * Waits for `promise` unless one of `signals` aborts first. Its listeners are removed as soon
 * as either happens, so a loop that waits many times on the same signals leaves none behind.
 * A rejection of `promise` rejects the wait.
 */
export function waitUnlessAborted<T>(
  promise: Promise<T>,
  signals: readonly (AbortSignal | undefined)[],
): Promise<Waited<T>> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  if (live.some((s) => s.aborted)) return Promise.resolve({ aborted: true });
  return new Promise<Waited<T>>((resolve, reject) => {
    const disposers: Dispose[] = [];
    const settle = (): void => {
      for (const dispose of disposers.splice(0)) dispose();
    };
    for (const signal of live) {
      disposers.push(
        onAbort(signal, () => {
          settle();
          resolve({ aborted: true });
        }),
      );
    }
    promise.then(
      (value) => {
        settle();
        resolve({ aborted: false, value });
      },
      (error: unknown) => {
        settle();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** A value that is set once, by whoever learns it first, and awaited by whoever needs it. */
export interface Latch<T> {
  readonly promise: Promise<T>;
  /** Sets the value unless it was set already; says whether this call set it. */
  settle(value: T): boolean;
  readonly settled: boolean;
}

export function createLatch<T>(): Latch<T> {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  let settled = false;
  return {
    promise,
    settle(value) {
      if (settled) return false;
      settled = true;
      resolve(value);
      return true;
    },
    get settled() {
      return settled;
    },
  };
}
