// Configuration is validated at start: each bad value is refused naming its variable.
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

describe("loadConfig", () => {
  test("defaults describe the embedded server: loopback, memory store, no auth, echo model", () => {
    const config = loadConfig({});
    expect(config.host).toBe("127.0.0.1");
    expect(config.port).toBe(50051);
    expect(config.metricsPort).toBe(9464);
    expect(config.store).toEqual({ kind: "memory" });
    expect(config.apiKeys).toBeUndefined();
    expect(config.tls).toBeUndefined();
    expect(config.provider).toEqual({ kind: "echo" });
  });

  test("parking: 2 s before a waiting turn parks, a day before a parked turn expires", () => {
    expect(loadConfig({})).toMatchObject({
      parkAfterMs: 2_000,
      parkedTurnTtlMs: 86_400_000,
      approvalRequiredTools: [],
    });
    const set = loadConfig({
      TETHER_PARK_AFTER_MS: "0",
      TETHER_PARKED_TURN_TTL_MS: "60000",
      TETHER_APPROVAL_REQUIRED_TOOLS: " files__delete, pay ,pay",
    });
    expect(set).toMatchObject({
      parkAfterMs: 0,
      parkedTurnTtlMs: 60_000,
      approvalRequiredTools: ["files__delete", "pay"],
    });
    expect(refusal({ TETHER_PARKED_TURN_TTL_MS: "10" }).message).toContain(
      "TETHER_PARKED_TURN_TTL_MS",
    );
    expect(refusal({ TETHER_APPROVAL_REQUIRED_TOOLS: "ok,not a name" }).message).toMatch(
      /TETHER_APPROVAL_REQUIRED_TOOLS: "not a name"/u,
    );
  });

  test("turn starts: at most 4 per event-loop iteration unless set; 0 turns the pacing off", () => {
    expect(loadConfig({}).turnStartsPerIteration).toBe(4);
    expect(loadConfig({ TETHER_TURN_STARTS_PER_ITERATION: "0" }).turnStartsPerIteration).toBe(0);
    expect(loadConfig({ TETHER_TURN_STARTS_PER_ITERATION: "16" }).turnStartsPerIteration).toBe(16);
    for (const bad of ["-1", "2.5", "lots"]) {
      expect(refusal({ TETHER_TURN_STARTS_PER_ITERATION: bad }).message).toContain(
        "TETHER_TURN_STARTS_PER_ITERATION",
      );
    }
  });

  test("connection limits: bounded timeouts, a per-address cap and HTTP/2 limits by default; each settable", () => {
    expect(loadConfig({}).connections).toEqual({
      handshakeTimeoutMs: 10_000,
      headersTimeoutMs: 20_000,
      idleTimeoutMs: 120_000,
      maxConnectionsPerAddress: 256,
      maxConcurrentStreams: 1_000,
      maxRejectedStreams: 100,
      maxInvalidFrames: 1_000,
      maxResetsPerSecond: 200,
    });
    const set = loadConfig({
      TETHER_IDLE_TIMEOUT_MS: "300",
      TETHER_MAX_CONNECTIONS_PER_ADDRESS: "0",
      TETHER_HTTP2_MAX_CONCURRENT_STREAMS: "5",
    }).connections;
    expect([set.idleTimeoutMs, set.maxConnectionsPerAddress, set.maxConcurrentStreams]).toEqual([
      300, 0, 5,
    ]);
    for (const [name, bad] of [
      ["TETHER_HANDSHAKE_TIMEOUT_MS", "0"],
      ["TETHER_HEADERS_TIMEOUT_MS", "soon"],
      ["TETHER_IDLE_TIMEOUT_MS", "-1"],
      ["TETHER_HTTP2_MAX_CONCURRENT_STREAMS", "0"],
      ["TETHER_HTTP2_MAX_RESETS_PER_SECOND", "1.5"],
    ] as const) {
      expect(refusal({ [name]: bad }).message).toContain(name);
    }
  });

  test("metric tenants and models: none unless listed, each validated, a bad one refuses the start", () => {
    expect(loadConfig({})).toMatchObject({ metricsTenants: [], metricsModels: [] });
    expect(
      loadConfig({
        TETHER_METRICS_TENANTS: " acme, beta ,acme",
        TETHER_METRICS_MODELS: "gpt-4o-mini,claude-3-5-haiku@20241022,org/model:tag",
      }),
    ).toMatchObject({
      metricsTenants: ["acme", "beta"],
      metricsModels: ["gpt-4o-mini", "claude-3-5-haiku@20241022", "org/model:tag"],
    });
    expect(refusal({ TETHER_METRICS_TENANTS: "acme,has space" }).message).toMatch(
      /^TETHER_METRICS_TENANTS: tenant "has space" must be/u,
    );
    expect(refusal({ TETHER_METRICS_TENANTS: "a:b" }).message).toMatch(
      /^TETHER_METRICS_TENANTS: tenant "a:b"/u,
    );
    expect(refusal({ TETHER_METRICS_MODELS: "ok,{bad}" }).message).toMatch(
      /^TETHER_METRICS_MODELS: model "\{bad\}" must be/u,
    );
  });

  test("a Redis store gets a command timeout, 5 s unless set", () => {
    const redis = { TETHER_STORE: "redis", TETHER_REDIS_URL: "redis://r:6379" };
    expect(loadConfig(redis).store).toMatchObject({ kind: "redis", commandTimeoutMs: 5_000 });
    expect(loadConfig({ ...redis, TETHER_REDIS_COMMAND_TIMEOUT_MS: "750" }).store).toMatchObject({
      commandTimeoutMs: 750,
    });
  });

  test("API keys map to tenants", () => {
    const config = loadConfig({ TETHER_API_KEYS: "k1=tenantA, k2=tenantB" });
    expect([...(config.apiKeys ?? [])]).toEqual([
      ["k1", "tenantA"],
      ["k2", "tenantB"],
    ]);
  });

  test.each([
    [{ TETHER_PORT: "http" }, "TETHER_PORT"],
    [{ TETHER_PORT: "70000" }, "TETHER_PORT"],
    [{ TETHER_METRICS_PORT: "-1" }, "TETHER_METRICS_PORT"],
    [{ TETHER_STORE: "postgres" }, "TETHER_STORE"],
    [{ TETHER_STORE: "redis" }, "TETHER_REDIS_URL"],
    [{ TETHER_STORE: "redis", TETHER_REDIS_URL: "localhost:6379" }, "TETHER_REDIS_URL"],
    [{ TETHER_STORE: "redis", TETHER_REDIS_CLUSTER_NODES: "a:1,b" }, "TETHER_REDIS_CLUSTER_NODES"],
    [
      {
        TETHER_STORE: "redis",
        TETHER_REDIS_URL: "redis://r:6379",
        TETHER_REDIS_COMMAND_TIMEOUT_MS: "5s",
      },
      "TETHER_REDIS_COMMAND_TIMEOUT_MS",
    ],
    [{ TETHER_API_KEYS: "justakey" }, "TETHER_API_KEYS"],
    [{ TETHER_API_KEYS: "k=bad tenant" }, "TETHER_API_KEYS"],
    [{ TETHER_TLS_CERT_FILE: "/c.pem" }, "TETHER_TLS_KEY_FILE"],
    [{ TETHER_MAX_MESSAGE_BYTES: "10" }, "TETHER_MAX_MESSAGE_BYTES"],
    [{ TETHER_REQUEST_TIMEOUT_MS: "0" }, "TETHER_REQUEST_TIMEOUT_MS"],
    [{ TETHER_LOG_LEVEL: "loud" }, "TETHER_LOG_LEVEL"],
    [{ TETHER_PROVIDER: "openai" }, "TETHER_OPENAI_API_KEY"],
    [
      { TETHER_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "x", TETHER_ANTHROPIC_BASE_URL: "nope" },
      "TETHER_ANTHROPIC_BASE_URL",
    ],
  ])("%j is refused naming %s", (env, variable) => {
    const error = refusal(env);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}:`)).toBe(true);
  });

  test("a refused API key entry is never echoed", () => {
    expect(refusal({ TETHER_API_KEYS: "s3cret-key" }).message).not.toContain("s3cret");
  });
});
