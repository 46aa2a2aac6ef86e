// The fault suite's verification reads ride out an outage the harness caused: UNAVAILABLE (or
// any failure) is retried on the next replica with a doubling pause, counted by code, within one
// budget for the whole phase; past the budget the last error is thrown.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createVerificationReads } from "../../faults/verify-reads.js";

const unavailable = () =>
  new ConnectError("store unavailable: Redis did not answer", Code.Unavailable);

function fakeSleep() {
  const pauses: number[] = [];
  return { pauses, sleep: (ms: number) => (pauses.push(ms), Promise.resolve()) };
}

describe("verification reads", () => {
  it("a read that meets UNAVAILABLE twice then succeeds returns the answer and reports two retries", async () => {
    const { pauses, sleep } = fakeSleep();
    const reads = createVerificationReads({ budgetMs: 10_000, firstPauseMs: 100, sleep });
    const asked: string[] = [];
    const answer = await reads.onAny(["a", "b", "c"], (url) => {
      asked.push(url);
      if (asked.length <= 2) return Promise.reject(unavailable());
      return Promise.resolve(`runs from ${url}`);
    });
    expect(answer).toBe("runs from c");
    expect(asked).toEqual(["a", "b", "c"]);
    expect(pauses).toEqual([100, 200]);
    expect(reads.report).toEqual({
      retries: { Unavailable: 2 },
      waited_ms: 300,
      longest_streak: 2,
    });
  });

  it("pauses double up to the ceiling, and the budget is shared by every read of the phase", async () => {
    const { pauses, sleep } = fakeSleep();
    const reads = createVerificationReads({
      budgetMs: 1_000,
      firstPauseMs: 100,
      maxPauseMs: 300,
      sleep,
    });
    let failures = 3;
    await reads.onAny(["a"], () =>
      failures-- > 0 ? Promise.reject(unavailable()) : Promise.resolve(1),
    );
    expect(pauses).toEqual([100, 200, 300]);
    // 600 ms of the 1,000 spent: the next read's outage may pause 400 ms more, then it fails.
    const error = await reads
      .onAny(["a"], () => Promise.reject(new ConnectError("deadline", Code.DeadlineExceeded)))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.DeadlineExceeded);
    expect(pauses).toEqual([100, 200, 300, 100, 200, 100]);
    expect(reads.report.waited_ms).toBe(1_000);
    expect(reads.report.retries).toEqual({ Unavailable: 3, DeadlineExceeded: 3 });
  });

  it("a store that never comes back still fails the read once the budget is spent", async () => {
    const { sleep } = fakeSleep();
    const reads = createVerificationReads({ budgetMs: 500, firstPauseMs: 100, sleep });
    let calls = 0;
    await expect(
      reads.onAny(["a", "b"], () => {
        calls++;
        return Promise.reject(unavailable());
      }),
    ).rejects.toThrow(/Redis did not answer/u);
    // 100 + 200 + 200 (the rest of the budget), then the fourth answer is final.
    expect(calls).toBe(4);
    expect(reads.report.waited_ms).toBe(500);
  });

  it("errors that are not RPC errors are retried too, counted as other", async () => {
    const { sleep } = fakeSleep();
    const reads = createVerificationReads({ budgetMs: 1_000, sleep });
    let first = true;
    const answer = await reads.onAny(["a"], () => {
      if (!first) return Promise.resolve("ok");
      first = false;
      return Promise.reject(new Error("socket hang up"));
    });
    expect(answer).toBe("ok");
    expect(reads.report.retries).toEqual({ other: 1 });
  });
});
