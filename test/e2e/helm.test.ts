// Runs the Helm chart gate (scripts/test-helm.sh) as part of the test command, then hands the
// environment each rendering gives the server to the server's own config loader, so the chart and
// src/server/config.ts cannot drift apart. On a fresh machine the script builds helm and the
// manifest checker from the Go module proxy, hence the long timeout.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/server/config.js";

const TEN_MINUTES = 10 * 60_000;

// Stand-ins for values that live in Secrets the chart only names.
const SECRET_STAND_INS: Record<string, string> = {
  TETHER_REDIS_URL: "redis://redis.example:6379/0",
  TETHER_REDIS_PASSWORD: "stand-in-password",
  TETHER_API_KEYS: "0123456789abcdef0123=acme",
  TETHER_OPENAI_API_KEY: "sk-stand-in",
  TETHER_ANTHROPIC_API_KEY: "sk-ant-stand-in",
  TETHER_WEBHOOK_SECRET_0: `whsec_${Buffer.alloc(32, 1).toString("base64")}`,
  TETHER_WEBHOOK_SECRET_1: `whsec_${Buffer.alloc(32, 2).toString("base64")}`,
};

describe("helm chart", () => {
  let envDir = "";
  let result: { code: number | null; output: string } = { code: null, output: "" };

  beforeAll(async () => {
    envDir = await mkdtemp(join(tmpdir(), "tether-helm-env-"));
    result = await new Promise((resolve) => {
      execFile(
        "bash",
        ["scripts/test-helm.sh"],
        {
          timeout: TEN_MINUTES - 10_000,
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, TETHER_HELM_ENV_DIR: envDir },
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
          resolve({ code, output: `${stdout}\n${stderr}` });
        },
      );
    });
  }, TEN_MINUTES);

  afterAll(async () => {
    if (envDir) await rm(envDir, { recursive: true, force: true });
  });

  it("lints, renders every values file into strictly valid manifests, and refuses bad values", () => {
    // The whole transcript on failure: which case broke and why.
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/^helm: \d+ passed, 0 failed$/m);
    expect(result.output).toContain("ok    strict decoding refuses a misspelt field");
    expect(result.output).toContain("ok    bad values refused: negative-replicas");
    expect(result.output).toContain("ok    bad values refused: numeric-image-tag");
    expect(result.output).toContain("ok    bad values refused: unknown-top-level-key");
    expect(result.output).toContain("ok    all-on-values: rendered manifests decode strictly");
    expect(result.output).toContain(
      "ok    bad values refused: webhook-endpoint-without-secret-ref",
    );
    expect(result.output).toContain("ok    bad values refused: webhook-endpoint-bad-url");
    expect(result.output).toContain(
      "ok    the invariant checks refuse a webhook endpoint whose secret is not from a Secret",
    );
  });

  async function renderedEnv(name: string): Promise<Record<string, string>> {
    const raw = JSON.parse(await readFile(join(envDir, `${name}.env.json`), "utf8")) as Record<
      string,
      string
    >;
    return Object.fromEntries(
      Object.entries(raw).map(([k, v]) => [
        k,
        v.startsWith("secret:") ? (SECRET_STAND_INS[k] ?? "unknown-secret") : v,
      ]),
    );
  }

  it("gives the server an environment its config loader accepts, for every values file", async () => {
    const cases = (await readdir(envDir)).filter((f) => f.endsWith(".env.json"));
    expect(cases.sort()).toEqual([
      "all-on-values.env.json",
      "cluster-values.env.json",
      "default.env.json",
      "existing-secret-values.env.json",
      "memory-values.env.json",
      "sentinel-values.env.json",
    ]);
    for (const file of cases) {
      const env = await renderedEnv(file.replace(/\.env\.json$/u, ""));
      expect(() => loadConfig(env), file).not.toThrow();
      expect(loadConfig(env).host, file).toBe("0.0.0.0");
    }
  });

  it("maps the values to the settings they name", async () => {
    const defaults = loadConfig(await renderedEnv("default"));
    expect(defaults.port).toBe(50051);
    expect(defaults.metricsPort).toBe(9464);
    expect(defaults.drainTimeoutMs).toBe(25_000);
    expect(defaults.store).toMatchObject({ kind: "redis", url: "redis://redis:6379/0" });
    expect(defaults.apiKeys).toBeUndefined();
    expect(defaults.provider).toEqual({ kind: "echo" });
    expect(defaults.tracing).toBeUndefined();

    const allOn = loadConfig(await renderedEnv("all-on-values"));
    expect(allOn.port).toBe(8443);
    expect(allOn.metricsPort).toBe(9090);
    expect(allOn.drainTimeoutMs).toBe(45_500);
    expect(allOn.logLevel).toBe("debug");
    expect(allOn.store).toMatchObject({
      kind: "redis",
      url: "rediss://tether@redis-primary.redis.svc:6380/2",
      password: "not-a-real-password",
    });
    expect(allOn.apiKeys?.get("key-0123456789abcdef")).toBe("acme");
    expect(allOn.apiKeys?.get("key-fedcba9876543210")).toBe("globex.eu");
    expect(allOn.tls).toEqual({
      certFile: "/etc/tether/tls/tls.crt",
      keyFile: "/etc/tether/tls/tls.key",
    });
    expect(allOn.provider).toEqual({
      kind: "openai",
      apiKey: "sk-not-a-real-key",
      baseUrl: "https://llm-gateway.example.com/v1",
      model: "gpt-4o-mini",
    });
    expect(allOn.tracing).toEqual({
      tracesUrl: "http://otel-collector.observability:4318/v1/traces",
      protocol: "http/json",
      serviceName: "tether-prod",
      sampler: { kind: "parentbased_traceidratio", ratio: 0.25 },
      captureContent: true,
      // The chart leaves the batch and shutdown settings at the SDK specification's defaults.
      batch: {
        scheduledDelayMs: 5000,
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
        exportTimeoutMs: 30000,
      },
      shutdownTimeoutMs: 2000,
    });
    expect(allOn).toMatchObject({ parkAfterMs: 0, parkedTurnTtlMs: 604_800_000 });
    expect([allOn.idempotencyKeyTtlMs, defaults.idempotencyKeyTtlMs]).toEqual([
      3_600_000, 86_400_000,
    ]);
    expect([allOn.turnStartsPerIteration, defaults.turnStartsPerIteration]).toEqual([8, 4]);
    expect(allOn.approvalRequiredTools).toEqual(["payments__charge", "files__delete"]);
    expect(allOn.metricsTenants).toEqual(["initech"]);
    expect(allOn.metricsModels).toEqual(["gpt-4.1", "claude-sonnet-4@20250514"]);
    expect(defaults).toMatchObject({ metricsTenants: [], metricsModels: [], corsOrigins: [] });
    expect(allOn.corsOrigins).toEqual(["https://console.example.com"]);
    expect(allOn.mcpCallTimeoutMs).toBe(30_000);
    expect(defaults.quotas).toEqual({ tenants: {}, default: undefined });
    expect(allOn.quotas).toEqual({
      default: { concurrent_turns: { max: 4, mode: "queue" } },
      tenants: {
        acme: {
          concurrent_turns: { max: 8, mode: "queue" },
          turns_per_minute: { max: 60, mode: "queue" },
          tokens_per_minute: { max: 200_000, mode: "reject" },
          tokens_per_day: { max: 5_000_000, mode: "reject" },
        },
      },
    });
    // A header from a Secret reaches the server through its own variable.
    expect(allOn.mcpServers).toEqual([
      {
        name: "files",
        transport: {
          kind: "http",
          url: "http://files-mcp:8080/mcp",
          headers: { "X-Team": "agents", Authorization: "unknown-secret" },
        },
        timeoutMs: undefined,
      },
      {
        name: "everything",
        transport: {
          kind: "stdio",
          command: "node",
          args: ["/opt/mcp/everything/dist/index.js", "stdio"],
          env: {},
        },
        timeoutMs: 5_000,
      },
    ]);
    expect(defaults.mcpServers).toEqual([]);
    // Spend budgets (ADR 0016): prices and tenant caps reach the server as JSON it accepts.
    expect(allOn.modelPrices.get("gpt-4o-mini")).toEqual({
      inputMicrosPerMillion: 150_000,
      outputMicrosPerMillion: 600_000,
      cacheReadMicrosPerMillion: 75_000,
      cacheWriteMicrosPerMillion: 150_000,
    });
    expect(allOn.modelPrices.get("*")?.outputMicrosPerMillion).toBe(15_000_000);
    expect(allOn.tenantBudgets.get("acme")).toEqual({ maxCostMicros: 20_000_000, period: "day" });
    expect(defaults.modelPrices.size).toBe(0);
    expect(defaults.tenantBudgets.size).toBe(0);

    const cluster = loadConfig(await renderedEnv("cluster-values"));
    expect(cluster.store).toMatchObject({
      kind: "redis",
      url: undefined,
      password: "stand-in-password",
      clusterNodes: [
        { host: "redis-cluster-0.redis-cluster-headless.redis.svc", port: 6379 },
        { host: "redis-cluster-1.redis-cluster-headless.redis.svc", port: 6379 },
        { host: "redis-cluster-2.redis-cluster-headless.redis.svc", port: 6379 },
      ],
    });

    expect(loadConfig(await renderedEnv("sentinel-values")).store).toMatchObject({
      kind: "redis",
      url: undefined,
      clusterNodes: [],
      password: "data-node-password",
      sentinel: {
        sentinels: [
          { host: "redis-node-0.redis-headless.redis.svc", port: 26379 },
          { host: "redis-node-1.redis-headless.redis.svc", port: 26379 },
          { host: "redis-node-2.redis-headless.redis.svc", port: 26379 },
        ],
        masterName: "mymaster",
        sentinelPassword: "sentinel-password",
      },
      durability: { mode: "replicated", minReplicas: 1, timeoutMs: 500 },
    });
    expect(loadConfig(await renderedEnv("default")).store).toMatchObject({
      durability: { mode: "async" },
    });

    expect(loadConfig(await renderedEnv("memory-values")).store).toEqual({ kind: "memory" });
    expect(loadConfig(await renderedEnv("existing-secret-values")).provider).toMatchObject({
      kind: "anthropic",
      apiKey: "sk-ant-stand-in",
    });
  });

  it("takes each declared webhook endpoint's secret from its Secret, named in TETHER_WEBHOOK_ENDPOINTS", async () => {
    const raw = JSON.parse(
      await readFile(join(envDir, "all-on-values.env.json"), "utf8"),
    ) as Record<string, string>;
    // The container reads the secrets by secretKeyRef; neither the ConfigMap nor values hold one.
    expect(raw["TETHER_WEBHOOK_SECRET_0"]).toBe("secret:tether-webhooks/acme-ops");
    expect(raw["TETHER_WEBHOOK_SECRET_1"]).toBe("secret:globex-hooks/signing-secret");
    expect(JSON.parse(raw["TETHER_WEBHOOK_ENDPOINTS"] ?? "")).toEqual([
      {
        tenant: "acme",
        endpoint_id: "ops",
        url: "https://hooks.example.com/tether?team=agents&env=prod",
        event_types: ["turn.completed", "turn.failed"],
        secret_env: "TETHER_WEBHOOK_SECRET_0",
      },
      {
        tenant: "globex.eu",
        endpoint_id: "billing",
        url: "http://billing.globex.svc:8080/hooks",
        event_types: [],
        secret_env: "TETHER_WEBHOOK_SECRET_1",
      },
    ]);
    const rendered = await readFile(join(envDir, "all-on-values.rendered.yaml"), "utf8");
    expect(rendered).toContain(
      [
        "            - name: TETHER_WEBHOOK_SECRET_0",
        "              valueFrom:",
        "                secretKeyRef:",
        "                  name: tether-webhooks",
        "                  key: acme-ops",
      ].join("\n"),
    );
    // The server's own loader accepts the rendering and reads the secrets from those variables.
    const allOn = loadConfig(await renderedEnv("all-on-values"));
    expect(allOn.webhooks.endpoints).toEqual([
      {
        tenant: "acme",
        endpointId: "ops",
        url: "https://hooks.example.com/tether?team=agents&env=prod",
        eventTypes: ["turn.completed", "turn.failed"],
        secretEnv: "TETHER_WEBHOOK_SECRET_0",
        secret: SECRET_STAND_INS["TETHER_WEBHOOK_SECRET_0"],
      },
      {
        tenant: "globex.eu",
        endpointId: "billing",
        url: "http://billing.globex.svc:8080/hooks",
        eventTypes: [],
        secretEnv: "TETHER_WEBHOOK_SECRET_1",
        secret: SECRET_STAND_INS["TETHER_WEBHOOK_SECRET_1"],
      },
    ]);
    expect(loadConfig(await renderedEnv("default")).webhooks.endpoints).toEqual([]);
  });

  it("installs the Grafana dashboard as a sidecar ConfigMap only when grafanaDashboard.enabled", async () => {
    const dashboardOf = async (name: string) => {
      const docs = (await readFile(join(envDir, `${name}.rendered.yaml`), "utf8")).split(/^---$/mu);
      return docs.filter((d) => /^\s+grafana_dashboard: "1"$/mu.test(d));
    };
    expect(await dashboardOf("default")).toEqual([]);
    const [doc, ...more] = await dashboardOf("all-on-values");
    expect(more).toEqual([]);
    expect(doc).toMatch(/^ {2}name: tether-prod-dashboard$/mu);
    expect(doc).toMatch(/^ {2}namespace: monitoring$/mu);
    expect(doc).toMatch(/^ {4}grafana_folder: Tether$/mu);
    // The data is the chart's file, byte for byte (a block scalar indented by four).
    const block = (doc ?? "").split(/^ {2}tether\.json: \|-\n/mu)[1] ?? "";
    const json = block
      .split("\n")
      .map((line) => line.slice(4))
      .join("\n")
      .trimEnd();
    const file = await readFile("helm/tether/dashboards/tether.json", "utf8");
    expect(json).toBe(file.trimEnd());
  });
});
