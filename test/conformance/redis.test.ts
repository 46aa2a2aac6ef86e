// The conformance suite against the Redis store on the standalone redis-server of the test run.
import { afterAll, beforeAll, describe, inject } from "vitest";
import type { Redis } from "ioredis";
import { connectStandalone, redisStoreFactory } from "../support/redis-store-factory.js";
import { defineStoreConformance } from "./define-store-conformance.js";

let redis: Redis | undefined;

beforeAll(() => {
  redis = connectStandalone(inject("redisUrl"));
});

afterAll(async () => {
  await redis?.quit();
});

describe("redis store conformance (standalone)", () => {
  defineStoreConformance(
    redisStoreFactory(() => {
      if (!redis) throw new Error("no Redis connection");
      return redis;
    }, "standalone"),
  );
});
