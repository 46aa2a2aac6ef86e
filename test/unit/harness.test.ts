import { Redis } from "ioredis";
import { describe, expect, inject, it } from "vitest";
import { sleep, waitFor } from "../support/wait-for.js";

describe("test harness", () => {
  it("provides a reachable standalone redis", async () => {
    const redis = new Redis(inject("redisUrl"));
    expect(await redis.ping()).toBe("PONG");
    redis.disconnect();
  });
  it("provides a 3-master cluster", () => {
    expect(inject("clusterPorts")).toHaveLength(3);
  });
});

describe("waitFor", () => {
  it("resolves with the check's first truthy value, async checks too", async () => {
    let calls = 0;
    expect(
      await waitFor(() => (++calls === 3 ? "ready" : undefined), { what: "a third call" }),
    ).toBe("ready");
    expect(calls).toBe(3);
    expect(await waitFor(() => Promise.resolve(7), { what: "an async value" })).toBe(7);
  });

  it("fails naming what never happened once its time is up", async () => {
    await expect(waitFor(() => false, { timeoutMs: 30, what: "the door" })).rejects.toThrow(
      "timed out after 30 ms waiting for the door",
    );
  });

  it("fails at once with the error of a check that throws", async () => {
    let calls = 0;
    const failing = () => {
      calls++;
      throw new Error("broken check");
    };
    await expect(waitFor(failing, { what: "a broken check" })).rejects.toThrow("broken check");
    expect(calls).toBe(1);
  });
});

describe("sleep", () => {
  it("resolves once its time has passed on the real clock", async () => {
    const started = Date.now();
    await sleep(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});
