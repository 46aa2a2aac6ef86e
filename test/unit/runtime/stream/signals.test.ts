// The abort-signal tools: each listens only as long as it must, so waits repeated on one
// long-lived signal (a replica's drain signal) leave no listener behind.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import {
  createLatch,
  createLinkedAbortController,
  onAbort,
  waitUnlessAborted,
} from "../../../../src/runtime/stream/signals.js";

const listeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

describe("onAbort", () => {
  it("calls its function once when the signal aborts, and no more listens", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    onAbort(controller.signal, () => calls.push("aborted"));
    expect(listeners(controller.signal)).toBe(1);
    controller.abort();
    expect(calls).toEqual(["aborted"]);
    expect(listeners(controller.signal)).toBe(0);
  });

  it("calls its function at once for a signal that already aborted", () => {
    const calls: string[] = [];
    onAbort(AbortSignal.abort(), () => calls.push("aborted"));
    expect(calls).toEqual(["aborted"]);
  });

  it("removes its listener when disposed, and the function is never called", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    for (let i = 0; i < 100; i++) onAbort(controller.signal, () => calls.push("aborted"))();
    expect(listeners(controller.signal)).toBe(0);
    controller.abort();
    expect(calls).toEqual([]);
  });
});

describe("createLinkedAbortController", () => {
  it("aborts with the reason of the input that aborted, and leaves the other inputs", () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = createLinkedAbortController(a.signal, undefined, b.signal);
    expect([listeners(a.signal), listeners(b.signal)]).toEqual([1, 1]);
    const reason = new Error("first");
    a.abort(reason);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe(reason);
    expect([listeners(a.signal), listeners(b.signal)]).toEqual([0, 0]);
  });

  it("let go of its inputs when aborted itself", () => {
    const input = new AbortController();
    for (let i = 0; i < 100; i++) createLinkedAbortController(input.signal).abort();
    expect(listeners(input.signal)).toBe(0);
    expect(input.signal.aborted).toBe(false);
  });

  it("starts aborted when an input already is", () => {
    const reason = new Error("gone");
    const linked = createLinkedAbortController(
      new AbortController().signal,
      AbortSignal.abort(reason),
    );
    expect(linked.signal.reason).toBe(reason);
  });
});

describe("waitUnlessAborted", () => {
  it("hands over the value when the promise settles first, and leaves no listener", async () => {
    const a = new AbortController();
    const b = new AbortController();
    for (let i = 0; i < 200; i++) {
      expect(await waitUnlessAborted(Promise.resolve(i), [a.signal, undefined, b.signal])).toEqual({
        aborted: false,
        value: i,
      });
    }
    expect([listeners(a.signal), listeners(b.signal)]).toEqual([0, 0]);
  });

  it("settles as aborted when a signal aborts first, and leaves no listener", async () => {
    const kept = new AbortController();
    for (let i = 0; i < 200; i++) {
      const ended = new AbortController();
      const waiting = waitUnlessAborted(new Promise<never>(() => undefined), [
        kept.signal,
        ended.signal,
      ]);
      ended.abort();
      expect(await waiting).toEqual({ aborted: true });
    }
    expect(listeners(kept.signal)).toBe(0);
  });

  it("settles as aborted at once for a signal that already aborted", async () => {
    const value = waitUnlessAborted(new Promise<never>(() => undefined), [AbortSignal.abort()]);
    expect(await value).toEqual({ aborted: true });
  });

  it("rejects with the promise's error, and leaves no listener", async () => {
    const signal = new AbortController().signal;
    const failed = waitUnlessAborted(Promise.reject(new Error("read failed")), [signal]);
    await expect(failed).rejects.toThrow("read failed");
    expect(listeners(signal)).toBe(0);
  });
});

describe("createLatch", () => {
  it("keeps the first value it is given", async () => {
    const latch = createLatch<string>();
    expect(latch.settled).toBe(false);
    expect(latch.settle("first")).toBe(true);
    expect(latch.settle("second")).toBe(false);
    expect(latch.settled).toBe(true);
    expect(await latch.promise).toBe("first");
  });
});
