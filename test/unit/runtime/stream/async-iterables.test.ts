// The async-iteration tools: a queue fed by callbacks and drained by one loop, and an iterator
// that stays one pull ahead of its reader.
import { describe, expect, it } from "vitest";
import { createAsyncQueue, prefetch } from "../../../../src/runtime/stream/async-iterables.js";
import { createLatch } from "../../../../src/runtime/stream/signals.js";

describe("createAsyncQueue", () => {
  it("hands items out in the order they were pushed", () => {
    const queue = createAsyncQueue<string>();
    queue.push("a");
    queue.push("b");
    expect(queue.size).toBe(2);
    expect([queue.take(), queue.take(), queue.take()]).toEqual(["a", "b", undefined]);
    expect(queue.size).toBe(0);
  });

  it("settles an arrival when the next item is pushed", async () => {
    const queue = createAsyncQueue<string>();
    const order: string[] = [];
    const arrived = queue.arrival().then(() => order.push(`arrived with ${queue.size}`));
    order.push("pushing");
    queue.push("a");
    await arrived;
    expect(order).toEqual(["pushing", "arrived with 1"]);
  });

  it("settles an arrival at once while an item waits", async () => {
    const queue = createAsyncQueue<string>();
    queue.push("a");
    await queue.arrival();
    expect(queue.take()).toBe("a");
  });

  it("shares one pending arrival between waits that gave up, until a push", () => {
    const queue = createAsyncQueue<string>();
    const first = queue.arrival();
    for (let i = 0; i < 100; i++) expect(queue.arrival()).toBe(first);
    queue.push("a");
    queue.take();
    expect(queue.arrival()).not.toBe(first);
  });

  it("settles a pending arrival on a wake with nothing queued, and the next waits anew", async () => {
    const queue = createAsyncQueue<string>();
    const woken = queue.arrival();
    queue.wake();
    await woken;
    expect(queue.size).toBe(0);
    expect(queue.take()).toBeUndefined();
    const next = queue.arrival();
    expect(next).not.toBe(woken);
    let settled = false;
    void next.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    queue.push("a");
    await next;
    expect(queue.take()).toBe("a");
  });
});

/** An iterator over `items` that records each pull and, once ended, its return. */
function recorded(items: string[]) {
  const pulls: string[] = [];
  let index = 0;
  const iterable: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        pulls.push(`pull ${index}`);
        const item = items[index++];
        return Promise.resolve(
          item === undefined ? { done: true, value: undefined } : { done: false, value: item },
        );
      },
      return: () => {
        pulls.push("return");
        return Promise.resolve({ done: true, value: undefined });
      },
    }),
  };
  return { pulls, iterable };
}

describe("prefetch", () => {
  it("pulls the first item as soon as it is made", () => {
    const source = recorded(["a"]);
    prefetch(source.iterable);
    expect(source.pulls).toEqual(["pull 0"]);
  });

  it("pulls the next item before handing one to its reader", async () => {
    const source = recorded(["a", "b"]);
    const ahead = prefetch(source.iterable);
    expect(await ahead.next()).toEqual({ done: false, value: "a" });
    expect(source.pulls).toEqual(["pull 0", "pull 1"]);
    expect(await ahead.next()).toEqual({ done: false, value: "b" });
    expect(await ahead.next()).toEqual({ done: true, value: undefined });
    expect(await ahead.next()).toEqual({ done: true, value: undefined });
    expect(source.pulls).toEqual(["pull 0", "pull 1", "pull 2"]);
  });

  it("pulls nothing past an item it pauses after until the reader asks", async () => {
    const source = recorded(["a", "end", "b"]);
    const ahead = prefetch(source.iterable, (item) => item === "end");
    expect(await ahead.next()).toEqual({ done: false, value: "a" });
    expect(await ahead.next()).toEqual({ done: false, value: "end" });
    expect(source.pulls).toEqual(["pull 0", "pull 1"]);
    expect(await ahead.next()).toEqual({ done: false, value: "b" });
    expect(source.pulls).toEqual(["pull 0", "pull 1", "pull 2", "pull 3"]);
  });

  it("ends its source once when the reader stops early", async () => {
    const source = recorded(["a", "b", "c"]);
    const ahead = prefetch(source.iterable);
    for await (const item of ahead) if (item === "a") break;
    await ahead.return?.();
    expect(source.pulls).toEqual(["pull 0", "pull 1", "return"]);
    expect(await ahead.next()).toEqual({ done: true, value: undefined });
  });

  it("does not wait for a source that is still producing when the reader stops", async () => {
    const gate = createLatch<void>();
    const sourceEnded = createLatch<void>();
    async function* slow(): AsyncGenerator<string> {
      try {
        yield "a";
        await gate.promise;
        yield "b";
      } finally {
        sourceEnded.settle();
      }
    }
    const ahead = prefetch(slow());
    expect(await ahead.next()).toEqual({ done: false, value: "a" });
    expect(await ahead.return?.()).toEqual({ done: true, value: undefined });
    expect(sourceEnded.settled).toBe(false);
    gate.settle();
    // The source ends once its pending pull is answered (a generator queues its return).
    await sourceEnded.promise;
  });

  it("does not report a failed pull nobody read", async () => {
    async function* failing(): AsyncGenerator<string> {
      yield "a";
      throw new Error("late failure");
    }
    const ahead = prefetch(failing());
    expect(await ahead.next()).toEqual({ done: false, value: "a" });
    await ahead.return?.();
  });
});
