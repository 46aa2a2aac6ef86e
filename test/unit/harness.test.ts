import { Redis } from "ioredis";
import { describe, expect, inject, it } from "vitest";

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
