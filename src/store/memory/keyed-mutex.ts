// Serializes async work per key: each operation of the memory store runs validation and
// mutation under its session's lock, so a concurrent call waits even when a test hook awaits.

export interface KeyedMutex {
  run<T>(key: string, fn: () => Promise<T> | T): Promise<T>;
}

export function createKeyedMutex(): KeyedMutex {
  const tails = new Map<string, Promise<void>>();
  return {
    async run<T>(key: string, fn: () => Promise<T> | T): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const tail = previous.then(() => held);
      tails.set(key, tail);
      await previous;
      try {
        return await fn();
      } finally {
        release();
        if (tails.get(key) === tail) tails.delete(key);
      }
    },
  };
}
