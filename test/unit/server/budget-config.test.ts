// TETHER_MODEL_PRICES and TETHER_TENANT_BUDGETS are checked at start: a bad value stops the
// process with an error naming the variable and the field (ADR 0016).
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

describe("spend budget configuration", () => {
  test("none by default", () => {
    const config = loadConfig({});
    expect(config.modelPrices.size).toBe(0);
    expect(config.tenantBudgets.size).toBe(0);
  });

  test("prices per model; cache prices default to the input price", () => {
    const config = loadConfig({
      TETHER_MODEL_PRICES:
        '{"gpt-4o-mini": {"input": 150000, "output": 600000, "cache_read": 75000}, "*": {"input": 1, "output": 2}}',
    });
    expect(config.modelPrices.get("gpt-4o-mini")).toEqual({
      inputMicrosPerMillion: 150000,
      outputMicrosPerMillion: 600000,
      cacheReadMicrosPerMillion: 75000,
      cacheWriteMicrosPerMillion: 150000,
    });
    expect(config.modelPrices.get("*")).toEqual({
      inputMicrosPerMillion: 1,
      outputMicrosPerMillion: 2,
      cacheReadMicrosPerMillion: 1,
      cacheWriteMicrosPerMillion: 1,
    });
  });

  test("tenant budgets; the period defaults to a UTC day", () => {
    const config = loadConfig({
      TETHER_TENANT_BUDGETS:
        '{"acme": {"max_cost_micros": 5000000}, "beta": {"max_cost_micros": 7, "period": "total"}}',
    });
    expect(config.tenantBudgets.get("acme")).toEqual({ maxCostMicros: 5000000, period: "day" });
    expect(config.tenantBudgets.get("beta")).toEqual({ maxCostMicros: 7, period: "total" });
  });

  test.each([
    ["TETHER_MODEL_PRICES", "{not json", "TETHER_MODEL_PRICES: is not valid JSON"],
    ["TETHER_MODEL_PRICES", "[1]", "TETHER_MODEL_PRICES: the value must be a JSON object"],
    [
      "TETHER_MODEL_PRICES",
      '{"m": {"input": -1, "output": 2}}',
      'TETHER_MODEL_PRICES: "m".input must be an integer between 0 and 9007199254740991',
    ],
    [
      "TETHER_MODEL_PRICES",
      '{"m": {"input": 1, "output": 2.5}}',
      'TETHER_MODEL_PRICES: "m".output must be an integer',
    ],
    [
      "TETHER_MODEL_PRICES",
      '{"m": {"input": 1, "output": 1e300}}',
      'TETHER_MODEL_PRICES: "m".output must be an integer',
    ],
    ["TETHER_MODEL_PRICES", '{"m": {"input": 1}}', 'TETHER_MODEL_PRICES: "m".output is required'],
    [
      "TETHER_MODEL_PRICES",
      '{"m": {"input": 1, "output": 1, "cached": 1}}',
      'TETHER_MODEL_PRICES: "m".cached is not a field',
    ],
    ["TETHER_MODEL_PRICES", '{"m": 5}', 'TETHER_MODEL_PRICES: "m" must be a JSON object'],
    [
      "TETHER_TENANT_BUDGETS",
      '{"acme": {}}',
      'TETHER_TENANT_BUDGETS: "acme".max_cost_micros is required',
    ],
    [
      "TETHER_TENANT_BUDGETS",
      '{"acme": {"max_cost_micros": -5}}',
      'TETHER_TENANT_BUDGETS: "acme".max_cost_micros must be an integer',
    ],
    [
      "TETHER_TENANT_BUDGETS",
      '{"acme": {"max_cost_micros": 5, "period": "week"}}',
      'TETHER_TENANT_BUDGETS: "acme".period must be "day" or "total"',
    ],
    [
      "TETHER_TENANT_BUDGETS",
      '{"a b": {"max_cost_micros": 5}}',
      'TETHER_TENANT_BUDGETS: tenant "a b" must be',
    ],
  ])("%s=%s is refused naming the variable and field", (variable, value, message) => {
    const error = refusal({ [variable]: value });
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(message)).toBe(true);
  });
});
