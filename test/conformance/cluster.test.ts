// The conformance suite against the Redis store on the 3-master Redis Cluster of the test run:
// every script must stay in one slot, and the session index lives in a slot of its own.
import { afterAll, beforeAll, describe, inject } from "vitest";
import type { Cluster } from "ioredis";
import { connectCluster, redisStoreFactory } from "../support/redis-store-factory.js";
import { defineStoreConformance } from "./define-store-conformance.js";

let cluster: Cluster | undefined;

beforeAll(() => {
  cluster = connectCluster(inject("clusterPorts"));
});

afterAll(async () => {
  await cluster?.quit();
});

describe("redis store conformance (cluster)", () => {
  defineStoreConformance(
    redisStoreFactory(() => {
      if (!cluster) throw new Error("no cluster connection");
      return cluster;
    }, "cluster"),
  );
});
