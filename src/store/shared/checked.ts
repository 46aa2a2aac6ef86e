// The one way a store port's input is checked (ADR 0034). Each port has a table of checkers, one
// per operation, and every backend is built behind `withChecks` with its port's table, so every
// operation sees ids, fences, drafts and counts that were validated here, once, with the same
// typed error on every backend; the operations themselves trust their types. The bad-input
// conformance laws (test/conformance) keep it honest on memory, Redis, Cluster and the wire.

/** A port operation: it answers with a promise, and a refused argument rejects that promise. */
type Operation = (...args: never[]) => Promise<unknown>;

/** Validates one operation's arguments by throwing a TetherError; what it returns is ignored. */
export type Checker<F> = F extends (...args: infer A) => Promise<unknown>
  ? (...args: A) => unknown
  : never;

/**
 * A checker for every operation of port `P`, optional ones included (`-?`): an operation added to
 * a port without its row here fails the type check where the table is written. Members that are
 * not operations (a flag such as `keepsReadyIndex`) have no row.
 */
export type CheckTable<P> = {
  [K in keyof P as NonNullable<P[K]> extends Operation ? K : never]-?: Checker<NonNullable<P[K]>>;
};

/** The row of an operation that takes nothing a caller could get wrong (close, a bounded read). */
export const nothingToCheck = (): void => {};

/**
 * `inner` with each operation of `table` checked first. A refused argument rejects the returned
 * promise (never a synchronous throw: callers use Promise.all and .catch) and `inner` is never
 * called. Not an async function: the store's hot path pays no extra promise per call. Members
 * outside the table (a backend's test hooks, its flags) pass through unchanged; an optional
 * operation the backend leaves out (startTurn on the wire) stays out.
 */
export function withChecks<P extends object, T extends P = P>(table: CheckTable<P>, inner: T): T {
  const outer = { ...inner } as Record<string, unknown>;
  const source = inner as Record<string, unknown>;
  for (const [name, check] of Object.entries(table) as [string, (...args: unknown[]) => void][]) {
    const run = source[name];
    if (typeof run !== "function") continue;
    outer[name] = (...args: unknown[]): Promise<unknown> => {
      try {
        check(...args);
      } catch (error) {
        return Promise.reject(error);
      }
      return run.apply(inner, args) as Promise<unknown>;
    };
  }
  return outer as T;
}
