// A server stream's messages passed through as they are, its end and its failure observed: what
// the metrics and error interceptors do to every stream. A plain iterator rather than an async
// generator wrapping `yield*`: each message then costs one promise reaction per interceptor
// instead of a generator's resume and its own promises (issue 27, "promise layers").

export interface StreamObserver {
  /** The stream ended normally (the inner iterator said done). */
  end?: () => void;
  /** The stream failed: returns what is thrown on instead (the same error, or a mapped one). */
  fail: (error: unknown) => unknown;
  /**
   * The transport threw in (it could not deliver: the client is gone); what the stream then
   * fails with goes here instead of `fail` when set.
   */
  abandoned?: (error: unknown) => unknown;
}

export function observeStream<T>(
  messages: AsyncIterable<T>,
  observer: StreamObserver,
): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const inner = messages[Symbol.asyncIterator]();
      const failed = (error: unknown): never => {
        throw observer.fail(error);
      };
      const abandoned = (error: unknown): never => {
        throw (observer.abandoned ?? observer.fail)(error);
      };
      const passed = (step: IteratorResult<T>): IteratorResult<T> => {
        if (step.done === true) observer.end?.();
        return step;
      };
      return {
        next: () => inner.next().then(passed, failed),
        // The client left early: the inner stream is closed too, as `yield*` would close it.
        return: (value?: unknown) =>
          inner.return
            ? inner.return(value).then((step) => step, failed)
            : Promise.resolve({ done: true, value: value as T }),
        // The transport throws in when it cannot deliver: handed on as `yield*` hands it on (the
        // inner stream ends, its cleanup runs), and what comes back is observed as a failure.
        throw: (error?: unknown) =>
          inner.throw
            ? inner.throw(error).then(passed, abandoned)
            : Promise.resolve(inner.return?.()).then(() => abandoned(error)),
      };
    },
  };
}
