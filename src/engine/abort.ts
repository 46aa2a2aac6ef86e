// Abort plumbing without timers: settle a promise early when a signal fires, and tie child
// controllers to a parent signal with listeners that are always removed.

export const ABORTED: unique symbol = Symbol("aborted");
export type Aborted = typeof ABORTED;

/** Resolves with the promise's value, or ABORTED as soon as `signal` aborts, whichever is first. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | Aborted> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise<T | Aborted>((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** A controller that aborts when `parent` does; `dispose` detaches it from the parent. */
export function childController(parent: AbortSignal): {
  controller: AbortController;
  dispose: () => void;
} {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, dispose: () => undefined };
  }
  const onAbort = (): void => controller.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return { controller, dispose: () => parent.removeEventListener("abort", onAbort) };
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
