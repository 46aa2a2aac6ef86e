// Small tools over async iteration: a queue that callbacks push into and one loop drains, and
// an iterator that keeps one pull ahead of its reader.

/** Items pushed from callbacks (a bus listener, a settled wait), taken by one loop in order. */
export interface AsyncQueue<T> {
  push(item: T): void;
  /** The oldest item, or undefined when none is queued. */
  take(): T | undefined;
  readonly size: number;
  /**
   * Settles once an item is queued (at once if one is). Waits that end otherwise (an abort)
   * leave nothing behind: every caller until the next push shares one promise.
   */
  arrival(): Promise<void>;
  /** Settles a pending arrival with nothing queued: the loop looks again (an abort, a stop). */
  wake(): void;
}

export function createAsyncQueue<T>(): AsyncQueue<T> {
  const items: T[] = [];
  let waiting: { promise: Promise<void>; resolve: () => void } | undefined;
  const wake = (): void => {
    const woken = waiting;
    waiting = undefined;
    woken?.resolve();
  };
  return {
    push(item) {
      items.push(item);
      wake();
    },
    wake,
    take: () => items.shift(),
    get size() {
      return items.length;
    },
    arrival() {
      if (items.length > 0) return Promise.resolve();
      if (!waiting) {
        let resolve: () => void = () => undefined;
        const promise = new Promise<void>((r) => (resolve = r));
        waiting = { promise, resolve };
      }
      return waiting.promise;
    },
  };
}

/**
 * Starts pulling `source` at once and stays one item ahead of the reader, so the source runs
 * on (a watch keeps listening and merging) while the reader handles what it was given. A pull
 * left unread when the reader stops is not an error; `return()` ends the source without
 * waiting for it. After an item `pauseAfter` picks (one the reader likely stops at), the next
 * pull waits for the reader to ask: the source is not run on for nothing (a watch would read
 * the log once its hold ends).
 */
export function prefetch<T>(
  source: AsyncIterable<T>,
  pauseAfter: (item: T) => boolean = () => false,
): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const pull = (): Promise<IteratorResult<T>> => {
    const next = iterator.next();
    next.catch(() => undefined);
    return next;
  };
  let ahead: Promise<IteratorResult<T>> | undefined = pull();
  let ended = false;
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (ended) return { done: true, value: undefined };
      const step = await (ahead ?? pull());
      if (step.done === true) ended = true;
      else ahead = pauseAfter(step.value) ? undefined : pull();
      return step;
    },
    return() {
      if (!ended) {
        ended = true;
        void iterator.return?.(undefined).catch(() => undefined);
      }
      return Promise.resolve({ done: true, value: undefined });
    },
  };
}
