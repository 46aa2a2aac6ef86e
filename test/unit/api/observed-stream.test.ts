// observeStream: the messages pass through in order, the end is observed once when the stream
// ends, a failure is observed and what the observer returns is thrown on, and a reader that
// stops early closes the inner stream without an end being observed.
import { describe, expect, it } from "vitest";
import { observeStream } from "../../../src/api/observed-stream.js";

async function* numbers(fail?: Error): AsyncGenerator<number> {
  yield 1;
  yield 2;
  if (fail) throw fail;
}

async function read<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of stream) seen.push(item);
  return seen;
}

describe("observeStream", () => {
  it("passes every message through and observes the end once", async () => {
    let ends = 0;
    const stream = observeStream(numbers(), { end: () => void ends++, fail: (e) => e });
    expect(await read(stream)).toEqual([1, 2]);
    expect(ends).toBe(1);
  });

  it("throws what the observer makes of a failure, after the messages before it", async () => {
    const seen: number[] = [];
    let ends = 0;
    const stream = observeStream(numbers(new Error("inner")), {
      end: () => void ends++,
      fail: (error) => new Error(`mapped ${(error as Error).message}`),
    });
    await expect(
      (async () => {
        for await (const item of stream) seen.push(item);
      })(),
    ).rejects.toThrow("mapped inner");
    expect(seen).toEqual([1, 2]);
    expect(ends).toBe(0);
  });

  it("closes the inner stream when the reader stops early, observing no end", async () => {
    let closed = false;
    let ends = 0;
    async function* endless(): AsyncGenerator<number> {
      try {
        for (let n = 0; ; n++) yield n;
      } finally {
        closed = true;
      }
    }
    const stream = observeStream(endless(), { end: () => void ends++, fail: (e) => e });
    for await (const item of stream) if (item === 3) break;
    expect(closed).toBe(true);
    expect(ends).toBe(0);
  });

  it("hands an error thrown in on to the inner stream and observes it as the failure", async () => {
    let closed = false;
    async function* inner(): AsyncGenerator<number> {
      try {
        yield 1;
        yield 2;
      } finally {
        closed = true;
      }
    }
    const failures: unknown[] = [];
    const iterator = observeStream(inner(), {
      fail: (error) => {
        failures.push(error);
        return error;
      },
    })[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: 1 });
    const gone = new Error("client gone");
    await expect(iterator.throw?.(gone)).rejects.toBe(gone);
    expect([closed, failures]).toEqual([true, [gone]]);
  });
});
