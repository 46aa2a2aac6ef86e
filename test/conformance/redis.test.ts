// The conformance suite against the Redis store on the standalone redis-server of the test run:
// on the caller's connection alone, and with the store's calls spread over three connections.
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
    { readyIndexInSteps: true, outboxFolded: true, chargesInCommit: true },
  );
});

describe("redis store conformance (standalone, calls spread over three connections)", () => {
  defineStoreConformance(
    redisStoreFactory(
      () => {
        if (!redis) throw new Error("no Redis connection");
        return redis;
      },
      "lanes",
      2,
    ),
    { readyIndexInSteps: true, outboxFolded: true, chargesInCommit: true },
  );
});
