// The store's variables (store-config.ts): TETHER_REDIS_SENTINELS and TETHER_REDIS_DURABILITY are
// validated at start, each bad value refused naming its variable; Sentinel is exclusive with a URL
// and with cluster nodes.
import { describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../../src/server/config.js";

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const SENTINEL = {
  TETHER_STORE: "redis",
  TETHER_REDIS_SENTINELS: "s1:26379, s2:26379,10.0.0.3:26380",
  TETHER_REDIS_SENTINEL_MASTER: "mymaster",
};

describe("Redis topology configuration", () => {
  test("Sentinel: the sentinels, the master's name and the two passwords", () => {
    const store = loadConfig({
      ...SENTINEL,
      TETHER_REDIS_SENTINEL_PASSWORD: "sentinel-secret",
      TETHER_REDIS_PASSWORD: "data-secret",
    }).store;
    expect(store).toEqual({
      kind: "redis",
      url: undefined,
      clusterNodes: [],
      password: "data-secret",
      commandTimeoutMs: 5_000,
      sentinel: {
        sentinels: [
          { host: "s1", port: 26379 },
          { host: "s2", port: 26379 },
          { host: "10.0.0.3", port: 26380 },
        ],
        masterName: "mymaster",
        sentinelPassword: "sentinel-secret",
      },
      durability: { mode: "async" },
    });
  });

  test("durability is async unless set; replicated takes 1 replica and 1 s unless set", () => {
    const url = { TETHER_STORE: "redis", TETHER_REDIS_URL: "redis://r:6379" };
    expect(loadConfig(url).store).toMatchObject({
      durability: { mode: "async" },
      sentinel: undefined,
    });
    expect(loadConfig({ ...url, TETHER_REDIS_DURABILITY: "replicated" }).store).toMatchObject({
      durability: { mode: "replicated", minReplicas: 1, timeoutMs: 1_000 },
    });
    expect(
      loadConfig({
        ...SENTINEL,
        TETHER_REDIS_DURABILITY: "replicated",
        TETHER_REDIS_MIN_REPLICAS: "2",
        TETHER_REDIS_WAIT_TIMEOUT_MS: "250",
      }).store,
    ).toMatchObject({ durability: { mode: "replicated", minReplicas: 2, timeoutMs: 250 } });
  });

  test.each([
    [{ ...SENTINEL, TETHER_REDIS_SENTINELS: "s1" }, "TETHER_REDIS_SENTINELS"],
    [{ ...SENTINEL, TETHER_REDIS_SENTINELS: "s1:0" }, "TETHER_REDIS_SENTINELS"],
    [{ ...SENTINEL, TETHER_REDIS_SENTINELS: " , " }, "TETHER_REDIS_SENTINELS"],
    [{ ...SENTINEL, TETHER_REDIS_URL: "redis://r:6379" }, "TETHER_REDIS_SENTINELS"],
    [{ ...SENTINEL, TETHER_REDIS_CLUSTER_NODES: "c:7000" }, "TETHER_REDIS_SENTINELS"],
    [{ TETHER_STORE: "redis", TETHER_REDIS_SENTINELS: "s1:26379" }, "TETHER_REDIS_SENTINEL_MASTER"],
    [{ ...SENTINEL, TETHER_REDIS_SENTINEL_MASTER: "my master" }, "TETHER_REDIS_SENTINEL_MASTER"],
    [
      { TETHER_STORE: "redis", TETHER_REDIS_URL: "redis://r", TETHER_REDIS_SENTINEL_MASTER: "m" },
      "TETHER_REDIS_SENTINEL_MASTER",
    ],
    [{ ...SENTINEL, TETHER_REDIS_DURABILITY: "sync" }, "TETHER_REDIS_DURABILITY"],
    [{ ...SENTINEL, TETHER_REDIS_MIN_REPLICAS: "0" }, "TETHER_REDIS_MIN_REPLICAS"],
    [{ ...SENTINEL, TETHER_REDIS_MIN_REPLICAS: "two" }, "TETHER_REDIS_MIN_REPLICAS"],
    [{ ...SENTINEL, TETHER_REDIS_WAIT_TIMEOUT_MS: "0" }, "TETHER_REDIS_WAIT_TIMEOUT_MS"],
    [
      {
        ...SENTINEL,
        TETHER_REDIS_DURABILITY: "replicated",
        TETHER_REDIS_WAIT_TIMEOUT_MS: "5000",
      },
      "TETHER_REDIS_WAIT_TIMEOUT_MS",
    ],
  ])("%j is refused naming %s", (env, variable) => {
    const error = refusal(env);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}:`)).toBe(true);
  });

  test("the error for a missing Redis address names every way to give one", () => {
    expect(refusal({ TETHER_STORE: "redis" }).message).toBe(
      "TETHER_REDIS_URL: TETHER_STORE=redis needs TETHER_REDIS_URL, TETHER_REDIS_CLUSTER_NODES or TETHER_REDIS_SENTINELS",
    );
  });
});
