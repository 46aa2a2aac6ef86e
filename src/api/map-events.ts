// Converts each runtime event as the transport pulls it. A plain iterator rather than another
// async generator: every generator layer costs extra promise hops per streamed delta.

export function mapEvents<T, R>(
  source: AsyncIterable<T>,
  convert: (item: T) => R | Promise<R>,
): AsyncIterable<R> {
  return {
    [Symbol.asyncIterator]() {
      const inner = source[Symbol.asyncIterator]();
      return {
        async next() {
          const step = await inner.next();
          if (step.done) return { done: true, value: undefined };
          // Most events convert synchronously: only a conversion that reads waits.
          const value = convert(step.value);
          return { done: false, value: value instanceof Promise ? await value : value };
        },
        async return() {
          await inner.return?.();
          return { done: true, value: undefined };
        },
        // The transport throws into the stream when it cannot deliver (the client went away).
        // Without this method, a `yield*` over this iterator turns that into a TypeError ("does
        // not provide a 'throw' method"); with it, the source ends (its cleanup runs) and the
        // transport's own error goes on.
        async throw(error: unknown) {
          await inner.return?.();
          throw error;
        },
      };
    },
  };
}
