// Waiting on a state the test cannot subscribe to (a store's lease, a log line, a listener
// count): poll until it holds, bounded, and fail naming what never happened. Not a sleep: the
// test goes on the moment the state holds.

export interface WaitForOptions {
  /** How long the state may take before the test fails (default 10 s). */
  timeoutMs?: number;
  /** Between checks (default 10 ms). */
  intervalMs?: number;
  /** Named in the failure. */
  what?: string;
}

/**
 * Resolves with the first truthy value `check` returns; rejects once `timeoutMs` has passed
 * without one. A check that throws fails the wait at once.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? "the state"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
}
