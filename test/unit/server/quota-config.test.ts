// TETHER_QUOTAS / TETHER_QUOTAS_FILE (ADR 0015): validated at start; a bad value refuses the start
// naming the variable and the field.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { streamLimitOf } from "../../../src/domain/quotas.js";
import { ConfigError, loadConfig } from "../../../src/server/config.js";

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("quota configuration", () => {
  test("none by default", () => {
    expect(loadConfig({}).quotas).toEqual({ tenants: {}, default: undefined });
  });

  test("a bare number is the max; concurrent_turns queues and the rates reject unless told", () => {
    const config = loadConfig({
      TETHER_QUOTAS: JSON.stringify({
        default: { concurrent_turns: 4 },
        tenants: {
          acme: {
            concurrent_turns: { max: 2, mode: "reject" },
            turns_per_minute: 60,
            tokens_per_minute: { max: 100000, mode: "queue" },
            tokens_per_day: 5000000,
          },
        },
      }),
    });
    expect(config.quotas).toEqual({
      default: { concurrent_turns: { max: 4, mode: "queue" } },
      tenants: {
        acme: {
          concurrent_turns: { max: 2, mode: "reject" },
          turns_per_minute: { max: 60, mode: "reject" },
          tokens_per_minute: { max: 100000, mode: "queue" },
          tokens_per_day: { max: 5000000, mode: "reject" },
        },
      },
    });
  });

  test("the same JSON from TETHER_QUOTAS_FILE", () => {
    const file = join(mkdtempSync(join(tmpdir(), "quotas-")), "quotas.json");
    writeFileSync(file, '{"tenants":{"acme":{"turns_per_minute":{"max":3,"mode":"queue"}}}}');
    expect(loadConfig({ TETHER_QUOTAS_FILE: file }).quotas.tenants).toEqual({
      acme: { turns_per_minute: { max: 3, mode: "queue" } },
    });
  });

  test.each([
    ["not json", "TETHER_QUOTAS: (document): not JSON"],
    ['{"tenant":{}}', 'TETHER_QUOTAS: tenant: is not a field (use "default" and "tenants")'],
    [
      '{"tenants":{"acme":{"turns_per_hour":5}}}',
      "TETHER_QUOTAS: tenants.acme.turns_per_hour: is not a limit",
    ],
    [
      '{"tenants":{"acme":{"concurrent_turns":0}}}',
      "TETHER_QUOTAS: tenants.acme.concurrent_turns.max: must be an integer of at least 1",
    ],
    [
      '{"tenants":{"acme":{"tokens_per_day":{"max":10,"mode":"drop"}}}}',
      'TETHER_QUOTAS: tenants.acme.tokens_per_day.mode: must be "queue" or "reject"',
    ],
    [
      '{"default":{"turns_per_minute":{"max":2.5}}}',
      "TETHER_QUOTAS: default.turns_per_minute.max: must be an integer of at least 1",
    ],
    ['{"tenants":{"a b":{}}}', "TETHER_QUOTAS: tenants.a b: tenant"],
    [
      '{"default":{"concurrent_streams":{"max":8,"mode":"queue"}}}',
      'TETHER_QUOTAS: default.concurrent_streams.mode: must be "reject" for concurrent_streams',
    ],
  ])("refuses %s naming the field", (json, message) => {
    expect(refusal({ TETHER_QUOTAS: json })).toContain(message);
  });

  test("concurrent_streams is a bare number (it only rejects), and has a default when not set", () => {
    const config = loadConfig({
      TETHER_QUOTAS: JSON.stringify({ tenants: { acme: { concurrent_streams: 8 } } }),
    });
    expect(config.quotas.tenants.acme).toEqual({ concurrent_streams: { max: 8, mode: "reject" } });
    expect(streamLimitOf(config.quotas, "acme")).toEqual({ max: 8, mode: "reject" });
    expect(streamLimitOf(config.quotas, "other")).toEqual({ max: 256, mode: "reject" });
    expect(streamLimitOf(loadConfig({}).quotas, "acme")).toEqual({ max: 256, mode: "reject" });
  });

  test("both variables, or an unreadable file, are refused by name", () => {
    expect(refusal({ TETHER_QUOTAS: "{}", TETHER_QUOTAS_FILE: "/x" })).toBe(
      "TETHER_QUOTAS: set it or TETHER_QUOTAS_FILE, not both",
    );
    expect(refusal({ TETHER_QUOTAS_FILE: "/nonexistent/quotas.json" })).toContain(
      "TETHER_QUOTAS_FILE: cannot read /nonexistent/quotas.json",
    );
  });
});
