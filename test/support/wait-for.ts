// The suite's one polling helper and its one sleep. Waiting on a state the test cannot subscribe
// to (a store's lease, a log line, a listener count): poll until it holds, bounded, and fail
// naming what never happened. Not a sleep: the test goes on the moment the state holds. A sleep
// is for a wait that is itself the subject (a quiet connection outliving its timeouts, a lease
// left to expire, pacing a flood), never to let something happen.

/** Below the suite's 20 s test timeout, so a wait that never ends fails with its own message. */
export const WAIT_FOR_DEFAULT_MS = 15_000;

export interface WaitForOptions {
  /** What the test waits for, named in the failure ("the lease to be released"). */
  what: string;
  /** How long the state may take before the test fails (default 15 s, for a busy machine). */
  timeoutMs?: number;
  /** Between checks (default 10 ms). */
  intervalMs?: number;
  /** Added to the failure when the time is up (a process's output, the last state seen). */
  detail?: () => string;
}

/**
 * Resolves with the first truthy value `check` returns; rejects once `timeoutMs` has passed
 * without one. A check that throws fails the wait at once (catch inside the check to poll
 * through errors, e.g. a server not yet listening).
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: WaitForOptions,
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? WAIT_FOR_DEFAULT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) {
      const detail = options.detail ? `\n${options.detail()}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what}${detail}`);
    }
    await sleep(options.intervalMs ?? 10);
  }
}

/** Waits `ms` on the real clock: only where the wait is the subject (see the header). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
