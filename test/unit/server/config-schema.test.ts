// The one configuration schema (ADR 0033): one reader over one table, one ConfigError naming the
// variable, and no other reader of the environment in src/.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { ConfigError, CONFIG_VARIABLES, loadConfig } from "../../../src/server/config.js";
import { createConfigReader, flag, integer, variable } from "../../../src/server/config-schema.js";

function refusal(values: Record<string, string>): ConfigError {
  try {
    loadConfig(values);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "gen" ? [] : sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

describe("the configuration schema", () => {
  test("names each variable once, and every default reads through its own parser", () => {
    const names = CONFIG_VARIABLES.map((v) => v.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    const unreadable = CONFIG_VARIABLES.filter((v) => {
      if (v.default === undefined) return false;
      try {
        v.parse(v.default);
        return false;
      } catch {
        return true;
      }
    });
    expect(unreadable.map((v) => v.name)).toEqual([]);
  });

  test("the reader: a blank value is unset, a default is parsed, a refusal names the variable", () => {
    const port = variable("X_PORT", "8080", integer(1, 65535), "a port");
    const off = variable("X_OFF", undefined, integer(1, 10), "optional");
    expect(createConfigReader({}).get(port)).toBe(8080);
    expect(createConfigReader({ X_PORT: "  " }).get(port)).toBe(8080);
    expect(createConfigReader({ X_PORT: " 9 " }).get(port)).toBe(9);
    expect(createConfigReader({}).get(off)).toBeUndefined();
    expect(createConfigReader({ X_OFF: "" }).isSet(off)).toBe(false);
    const error = (() => {
      try {
        createConfigReader({ X_OFF: "11" }).get(off);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({
      variable: "X_OFF",
      problem: 'must be an integer between 1 and 10, got "11"',
      message: 'X_OFF: must be an integer between 1 and 10, got "11"',
    });
  });

  test("a value is checked only when read: a provider's base URL is not read for the echo model", () => {
    expect(loadConfig({ TETHER_OPENAI_BASE_URL: "not a url" }).provider).toEqual({ kind: "echo" });
    expect(
      refusal({
        TETHER_PROVIDER: "openai",
        TETHER_OPENAI_API_KEY: "k",
        TETHER_OPENAI_BASE_URL: "not a url",
      }).message,
    ).toBe("TETHER_OPENAI_BASE_URL: must be an absolute URL");
  });

  test("booleans: true or false in any case; the webhook switches also take 1 and 0", () => {
    expect(flag()("TRUE")).toBe(true);
    expect(() => flag()("1")).toThrow('must be true or false, got "1"');
    expect(
      loadConfig({ TETHER_WEBHOOKS: "0", TETHER_WEBHOOK_ALLOW_PRIVATE: "1" }).webhooks,
    ).toMatchObject({ enabled: false, allowPrivate: true });
    expect(loadConfig({ TETHER_WEBHOOKS: "False" }).webhooks.enabled).toBe(false);
    expect(refusal({ TETHER_WEBHOOKS: "yes" }).message).toBe(
      'TETHER_WEBHOOKS: must be true or false, got "yes"',
    );
    expect(refusal({ TETHER_OTEL_CAPTURE_CONTENT: "1" }).variable).toBe(
      "TETHER_OTEL_CAPTURE_CONTENT",
    );
  });

  test("webhook intervals: defaults, their bounds, and the number forms they have always read", () => {
    expect(loadConfig({}).webhooks).toMatchObject({
      pollMs: 500,
      leaseMs: 60_000,
      timeoutMs: 10_000,
    });
    expect(loadConfig({ TETHER_WEBHOOK_POLL_MS: "1e3" }).webhooks.pollMs).toBe(1000);
    expect(refusal({ TETHER_WEBHOOK_POLL_MS: "5" }).message).toBe(
      'TETHER_WEBHOOK_POLL_MS: must be an integer between 10 and 60000, got "5"',
    );
    expect(refusal({ TETHER_WEBHOOK_LEASE_MS: "1.5" }).variable).toBe("TETHER_WEBHOOK_LEASE_MS");
    expect(refusal({ TETHER_WEBHOOK_TIMEOUT_MS: "120001" }).variable).toBe(
      "TETHER_WEBHOOK_TIMEOUT_MS",
    );
  });

  test("TETHER_OWNER_ID is read with the rest; unset, the replica is named by its hostname", () => {
    expect(loadConfig({ TETHER_OWNER_ID: "tether-0" }).ownerId).toBe("tether-0");
    expect(loadConfig({}).ownerId).toBeUndefined();
  });

  test("only loadConfig reads process.env in src/ (besides the PATH an MCP child inherits)", () => {
    const src = new URL("../../../src", import.meta.url).pathname;
    const readers = sourceFiles(src).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.includes("process.env") && !/^\s*(\/\/|\*)/u.test(line))
        .map((line) => `${relative(src, file)}: ${line.trim()}`),
    );
    expect(readers).toEqual([
      'mcp/connection.ts: env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...t.env },',
      "server/config.ts: export function loadConfig(env: Env = process.env): TetherConfig {",
    ]);
  });
});
