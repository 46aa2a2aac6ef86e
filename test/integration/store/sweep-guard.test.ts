// The sweep's redlock guard: one sweep at a time, held as long as the sweep runs (redlock extends
// it), and given up soon when its holder vanishes: a replica killed mid-sweep must not stop every
// other replica's sweep for long (it held a 30 s lock once, and a killed holder's sessions waited
// that long to be taken over).
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { createRedlockGuard } from "../../../src/server/sweep-guard.js";
import { connectStandalone, freshNamespace } from "../../support/redis-store-factory.js";
import { waitFor } from "../../support/wait-for.js";

const LOCK_MS = 600;
let redis: Redis;

beforeAll(() => {
  redis = connectStandalone(inject("redisUrl"));
});

afterAll(async () => {
  await redis.quit();
});

/** A task that runs until released, saying when it started. */
function heldTask() {
  let release!: () => void;
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const done = new Promise<void>((resolve) => (release = resolve));
  return { task: () => (started(), done), running, release };
}

describe("the sweep guard (redlock)", () => {
  test("runs one task at a time, past the lock's first lifetime, and lets the next in after it", async () => {
    const resource = `${freshNamespace("sweep")}:sweeper`;
    const first = createRedlockGuard(redis, resource, LOCK_MS);
    const second = createRedlockGuard(redis, resource, LOCK_MS);
    const held = heldTask();
    const outcome = first(held.task);
    await held.running;
    expect(await second(async () => undefined)).toBe(false);
    // Redlock extends the lock while the task runs: its remaining time rises again each time.
    // After three extensions (past three of its lifetimes) the first task still holds it.
    let extensions = 0;
    let remaining = await redis.pttl(resource);
    await waitFor(
      async () => {
        const now = await redis.pttl(resource);
        if (now > remaining) extensions++;
        remaining = now;
        return extensions >= 3;
      },
      { timeoutMs: 20 * LOCK_MS, what: "three extensions of the running task's lock" },
    );
    expect(await second(async () => undefined)).toBe(false);
    held.release();
    expect(await outcome).toBe(true);
    expect(await second(async () => undefined)).toBe(true);
  });

  test("a task's failure reaches the caller, and the lock is free after it", async () => {
    const resource = `${freshNamespace("sweep")}:sweeper`;
    const guard = createRedlockGuard(redis, resource, LOCK_MS);
    await expect(guard(() => Promise.reject(new Error("sweep failed")))).rejects.toThrow(
      "sweep failed",
    );
    expect(await guard(async () => undefined)).toBe(true);
  });

  test("a holder whose connection is gone loses the lock within its lifetime", async () => {
    const resource = `${freshNamespace("sweep")}:sweeper`;
    const doomed = redis.duplicate();
    const dying = createRedlockGuard(doomed, resource, LOCK_MS);
    const other = createRedlockGuard(redis, resource, LOCK_MS);
    const held = heldTask();
    const outcome = dying(held.task);
    await held.running;
    expect(await other(async () => undefined)).toBe(false);
    // As a killed replica: its connection ends and nothing extends or releases its lock.
    doomed.disconnect();
    await waitFor(() => other(async () => undefined), {
      timeoutMs: 10 * LOCK_MS,
      intervalMs: 50,
      what: "the lock of a holder whose connection ended to expire",
    });
    held.release();
    await outcome.catch(() => undefined);
  });
});
