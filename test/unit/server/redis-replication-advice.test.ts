// The start-up advice on Redis replication settings (ADR 0022): which findings warn, for which
// durability, with literal facts. Reading the facts from a real primary is in
// test/integration/redis-fencing-failover.test.ts.
import { describe, expect, test } from "vitest";
import {
  replicationAdvice,
  type PrimaryReplicationFacts,
} from "../../../src/server/redis-replication-advice.js";

const guarded: PrimaryReplicationFacts = {
  node: "10.0.0.1:6379",
  minReplicasToWrite: 1,
  minReplicasMaxLagS: 10,
  connectedReplicas: 2,
};

describe("Redis replication advice", () => {
  test("nothing to say when the primary guards itself and every replica must confirm", () => {
    expect(
      replicationAdvice(guarded, { mode: "replicated", minReplicas: 2, timeoutMs: 1000 }),
    ).toEqual([]);
    expect(replicationAdvice(guarded, { mode: "async" })).toEqual([]);
  });

  test("a lone primary has nobody to be failed over to: no advice in async mode", () => {
    const lone = { ...guarded, minReplicasToWrite: 0, connectedReplicas: 0 };
    expect(replicationAdvice(lone, { mode: "async" })).toEqual([]);
  });

  test("replicas without min-replicas-to-write: the isolated old primary keeps taking writes", () => {
    const open = { ...guarded, minReplicasToWrite: 0 };
    const advice = replicationAdvice(open, { mode: "async" });
    expect(advice).toHaveLength(1);
    expect(advice[0]).toContain("10.0.0.1:6379 has 2 replica(s) and min-replicas-to-write 0");
    expect(advice[0]).toContain("min-replicas-max-lag below Sentinel's down-after-milliseconds");
  });

  test("fewer replicas required than attached: a failover may lose an acknowledged write", () => {
    const advice = replicationAdvice(guarded, {
      mode: "replicated",
      minReplicas: 1,
      timeoutMs: 1000,
    });
    expect(advice).toHaveLength(1);
    expect(advice[0]).toContain("10.0.0.1:6379 has 2 replicas and TETHER_REDIS_MIN_REPLICAS is 1");
  });

  test("more replicas required than attached: acknowledgements fail until they attach", () => {
    const advice = replicationAdvice(
      { ...guarded, connectedReplicas: 0 },
      { mode: "replicated", minReplicas: 1, timeoutMs: 1000 },
    );
    expect(advice).toEqual([
      "10.0.0.1:6379 has 0 replica(s) attached and TETHER_REDIS_MIN_REPLICAS is 1: every " +
        "acknowledging call fails UNAVAILABLE until enough attach",
    ]);
  });

  test("CONFIG refused (managed Redis): no claim about min-replicas-to-write", () => {
    const managed = { ...guarded, minReplicasToWrite: undefined, minReplicasMaxLagS: undefined };
    expect(replicationAdvice(managed, { mode: "async" })).toEqual([]);
  });
});
