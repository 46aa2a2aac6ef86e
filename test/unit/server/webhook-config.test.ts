// TETHER_WEBHOOK_ENDPOINTS (ADR 0021): endpoints declared by the operator, each secret read from
// the variable its entry names. Validated at start with the webhook domain's own rules; a bad
// value refuses the start naming the variable and the field, never echoing a secret.
import { describe, expect, test, vi } from "vitest";
import { ConfigError, loadConfig } from "../../../src/server/config.js";
import {
  applyConfiguredEndpoints,
  applyDeclaredEndpoints,
} from "../../../src/server/webhook-endpoints.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";

const SECRET_A = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
const SECRET_B = `whsec_${Buffer.alloc(32, 2).toString("base64")}`;

function env(entries: unknown, extra: Record<string, string> = {}): Record<string, string> {
  return { TETHER_WEBHOOK_ENDPOINTS: JSON.stringify(entries), ...extra };
}

const ops = {
  tenant: "acme",
  endpoint_id: "ops",
  url: "https://hooks.example.com/tether",
  secret_env: "TETHER_WEBHOOK_SECRET_0",
};

function refusal(values: Record<string, string>): ConfigError {
  try {
    loadConfig(values);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe("TETHER_WEBHOOK_ENDPOINTS", () => {
  test("none by default", () => {
    expect(loadConfig({}).webhooks.endpoints).toEqual([]);
    expect(loadConfig({ TETHER_WEBHOOK_ENDPOINTS: " " }).webhooks.endpoints).toEqual([]);
  });

  test("reads each secret from the variable its entry names", () => {
    const config = loadConfig(
      env(
        [
          ops,
          {
            tenant: "globex",
            endpoint_id: "billing",
            url: "http://billing.internal:8080/in",
            event_types: ["turn.completed", "turn.failed", "turn.completed"],
            secret_env: "BILLING_HOOK_SECRET",
          },
        ],
        { TETHER_WEBHOOK_SECRET_0: ` ${SECRET_A}\n`, BILLING_HOOK_SECRET: SECRET_B },
      ),
    );
    expect(config.webhooks.endpoints).toEqual([
      {
        tenant: "acme",
        endpointId: "ops",
        url: "https://hooks.example.com/tether",
        eventTypes: [],
        secretEnv: "TETHER_WEBHOOK_SECRET_0",
        secret: SECRET_A,
      },
      {
        tenant: "globex",
        endpointId: "billing",
        url: "http://billing.internal:8080/in",
        eventTypes: ["turn.completed", "turn.failed"],
        secretEnv: "BILLING_HOOK_SECRET",
        secret: SECRET_B,
      },
    ]);
  });

  test.each([
    ["not JSON", "[{", "TETHER_WEBHOOK_ENDPOINTS: must be a JSON list of endpoints"],
    ["not a list", "{}", "TETHER_WEBHOOK_ENDPOINTS: must be a JSON list of endpoints"],
    ["an entry not an object", "[1]", "TETHER_WEBHOOK_ENDPOINTS: [0] must be an object"],
  ])("refuses %s", (_name, raw, message) => {
    expect(refusal({ TETHER_WEBHOOK_ENDPOINTS: raw }).message).toBe(message);
  });

  test.each([
    [
      "an unknown field",
      { ...ops, secret: SECRET_A },
      "TETHER_WEBHOOK_ENDPOINTS",
      "TETHER_WEBHOOK_ENDPOINTS: [0].secret is not a known field",
    ],
    [
      "a missing tenant",
      { ...ops, tenant: undefined },
      "TETHER_WEBHOOK_ENDPOINTS",
      "TETHER_WEBHOOK_ENDPOINTS: [0].tenant must be a non-empty string",
    ],
    [
      "a bad tenant",
      { ...ops, tenant: "acme corp" },
      "TETHER_WEBHOOK_ENDPOINTS",
      `TETHER_WEBHOOK_ENDPOINTS: [0].tenant: tenant "acme corp" must be 1-64 characters of letters, digits, '.', '_', '-'`,
    ],
    [
      "a bad endpoint id",
      { ...ops, endpoint_id: "a/b" },
      "TETHER_WEBHOOK_ENDPOINTS",
      "TETHER_WEBHOOK_ENDPOINTS: [0]: endpoint_id: must be 1-128 characters of letters, digits, '.', '_' or '-'",
    ],
    [
      "a URL that is not http",
      { ...ops, url: "ftp://hooks.example.com/" },
      "TETHER_WEBHOOK_ENDPOINTS",
      "TETHER_WEBHOOK_ENDPOINTS: [0]: url: must use http or https",
    ],
    [
      "a URL with credentials",
      { ...ops, url: "https://user:pw@hooks.example.com/" },
      "TETHER_WEBHOOK_ENDPOINTS",
      "TETHER_WEBHOOK_ENDPOINTS: [0]: url: must not carry credentials",
    ],
    [
      "an unknown event type",
      { ...ops, event_types: ["turn.done"] },
      "TETHER_WEBHOOK_ENDPOINTS",
      'TETHER_WEBHOOK_ENDPOINTS: [0]: event_types: unknown event type "turn.done"',
    ],
    [
      "event types that are not a list",
      { ...ops, event_types: "turn.completed" },
      "TETHER_WEBHOOK_ENDPOINTS",
      "TETHER_WEBHOOK_ENDPOINTS: [0].event_types must be a list of strings",
    ],
    [
      "a secret_env that is no variable name",
      { ...ops, secret_env: "MY-SECRET" },
      "TETHER_WEBHOOK_ENDPOINTS",
      "TETHER_WEBHOOK_ENDPOINTS: [0].secret_env must be an environment variable name",
    ],
    [
      "a secret variable that is not set",
      { ...ops, secret_env: "UNSET_SECRET" },
      "UNSET_SECRET",
      "UNSET_SECRET: is not set (named by TETHER_WEBHOOK_ENDPOINTS[0].secret_env)",
    ],
  ])("refuses %s, naming the variable and the field", (_name, entry, variable, message) => {
    const error = refusal(env([entry], { TETHER_WEBHOOK_SECRET_0: SECRET_A }));
    expect(error.variable).toBe(variable);
    expect(error.message).toBe(message);
  });

  test("refuses a malformed secret by its variable, without echoing it", () => {
    const error = refusal(env([ops], { TETHER_WEBHOOK_SECRET_0: "whsec_c2hvcnQ=" }));
    expect(error.variable).toBe("TETHER_WEBHOOK_SECRET_0");
    expect(error.message).toBe(
      "TETHER_WEBHOOK_SECRET_0: named by TETHER_WEBHOOK_ENDPOINTS[0].secret_env: secret: must be whsec_ followed by a base64 key of 24 to 64 bytes",
    );
    expect(error.message).not.toContain("c2hvcnQ");
  });

  test("refuses the same endpoint twice", () => {
    const error = refusal(env([ops, ops], { TETHER_WEBHOOK_SECRET_0: SECRET_A }));
    expect(error.message).toBe("TETHER_WEBHOOK_ENDPOINTS: [1] repeats endpoint ops of tenant acme");
  });
});

describe("applying configured endpoints", () => {
  const configured = (url: string, secret: string) =>
    loadConfig(env([{ ...ops, url }], { TETHER_WEBHOOK_SECRET_0: secret })).webhooks.endpoints;

  test("creates, then updates url, event types and secret; the log names no secret", async () => {
    const store = createMemoryStore().webhooks;
    const lines: { fields: object; message: string }[] = [];
    const logger = {
      ...silent,
      info: (fields: object, message: string) => lines.push({ fields, message }),
    };
    expect(
      await applyConfiguredEndpoints(
        store,
        configured("https://a.example.com/", SECRET_A),
        logger,
        1000,
      ),
    ).toEqual(["created"]);
    expect(
      await applyConfiguredEndpoints(
        store,
        configured("https://b.example.com/", SECRET_B),
        logger,
        2000,
      ),
    ).toEqual(["updated"]);
    expect(await store.getEndpoint("acme", "ops")).toMatchObject({
      url: "https://b.example.com/",
      eventTypes: [],
      secret: SECRET_B,
      createdAtMs: 1000,
      disabled: false,
    });
    expect(lines.map((l) => l.message)).toEqual([
      "webhook endpoint acme/ops created from TETHER_WEBHOOK_ENDPOINTS",
      "webhook endpoint acme/ops updated from TETHER_WEBHOOK_ENDPOINTS",
    ]);
    expect(lines[1]?.fields).toEqual({
      tenant: "acme",
      endpointId: "ops",
      url: "https://b.example.com/",
      eventTypes: "all",
      secretEnv: "TETHER_WEBHOOK_SECRET_0",
      result: "updated",
    });
    expect(JSON.stringify(lines)).not.toContain(SECRET_B.slice("whsec_".length, 20));
  });

  test("replicas starting at once leave one endpoint, as configured", async () => {
    const store = createMemoryStore().webhooks;
    const endpoints = configured("https://a.example.com/", SECRET_A);
    const results = await Promise.all(
      [1, 2, 3].map(() => applyConfiguredEndpoints(store, endpoints, silent, 1000)),
    );
    expect(results.flat().sort()).toEqual(["created", "updated", "updated"]);
    expect(await store.listEndpoints("acme")).toHaveLength(1);
    expect(await store.getEndpoint("acme", "ops")).toMatchObject({
      url: "https://a.example.com/",
      secret: SECRET_A,
    });
  });

  test("a store that does not answer at start does not stop the start: it is retried until applied", async () => {
    const store = createMemoryStore().webhooks;
    let refusals = 2;
    const flaky = {
      ...store,
      createEndpoint: (draft: Parameters<typeof store.createEndpoint>[0]) =>
        refusals-- > 0
          ? Promise.reject(new Error("store unreachable"))
          : store.createEndpoint(draft),
      updateEndpoint: store.updateEndpoint.bind(store),
    };
    const warnings: string[] = [];
    const logger = { ...silent, warn: (_f: object, message: string) => warnings.push(message) };
    const declared = await applyDeclaredEndpoints(
      flaky,
      configured("https://a.example.com/", SECRET_A),
      logger,
      10,
    );
    expect(await store.getEndpoint("acme", "ops")).toBeUndefined();
    await declared.applied;
    declared.stop();
    expect(await store.getEndpoint("acme", "ops")).toMatchObject({ url: "https://a.example.com/" });
    expect(warnings).toEqual([
      "declared webhook endpoints not applied (store unreachable?); retrying",
      "declared webhook endpoints not applied (store unreachable?); retrying",
    ]);
  });

  test("stop ends the retries", async () => {
    vi.useFakeTimers();
    try {
      const store = createMemoryStore().webhooks;
      let attempts = 0;
      const down = {
        ...store,
        createEndpoint: () => {
          attempts++;
          return Promise.reject(new Error("store unreachable"));
        },
      };
      const endpoints = configured("https://a.example.com/", SECRET_A);
      const declared = await applyDeclaredEndpoints(down, endpoints, silent, 5);
      expect(attempts).toBe(1);
      await vi.advanceTimersByTimeAsync(5);
      expect(attempts).toBe(2);
      declared.stop();
      await vi.advanceTimersByTimeAsync(100);
      expect(attempts).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
