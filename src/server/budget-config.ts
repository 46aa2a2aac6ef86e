// Spend budget configuration (ADR 0016): TETHER_MODEL_PRICES and TETHER_TENANT_BUDGETS, JSON
// objects checked once at start, entries of the one schema (ADR 0033); a refusal here names the
// field, and the reader names the variable.
import { checkTenantName } from "../api/tenancy.js";
import { MAX_BUDGET_VALUE, type ModelPrice, type TenantBudget } from "../domain/budgets.js";
import { variable } from "./config-schema.js";

type Raw = Record<string, unknown>;

function objectOf(value: unknown, what: string): Raw {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${what} must be a JSON object`);
  }
  return value as Raw;
}

function parseJson(raw: string): Raw {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new Error(`is not valid JSON (${(error as Error).message})`, { cause: error });
  }
  return objectOf(parsed, "the value");
}

function onlyFields(entry: Raw, where: string, allowed: readonly string[]): void {
  for (const key of Object.keys(entry)) {
    if (!allowed.includes(key)) {
      throw new Error(`${where}.${key} is not a field (expected ${allowed.join(", ")})`);
    }
  }
}

function amount(entry: Raw, field: string, where: string): number | undefined {
  const value = entry[field];
  if (value === undefined) return undefined;
  if (
    typeof value !== "number" ||
    !Number.isInteger(value) ||
    value < 0 ||
    value > MAX_BUDGET_VALUE
  ) {
    throw new Error(`${where}.${field} must be an integer between 0 and ${MAX_BUDGET_VALUE}`);
  }
  return value;
}

const PRICE_FIELDS = ["input", "output", "cache_read", "cache_write"] as const;

/**
 * `{"<model>": {"input": n, "output": n, "cache_read": n, "cache_write": n}}` in micros per
 * million tokens; input and output are required, cache prices default to the input price (so an
 * unlisted cache price never makes a turn look cheaper than it was). "*" prices any other model.
 */
function parseModelPrices(raw: string): Map<string, ModelPrice> {
  const prices = new Map<string, ModelPrice>();
  for (const [model, value] of Object.entries(parseJson(raw))) {
    const where = JSON.stringify(model);
    if (model === "") throw new Error("a model name must not be empty");
    const entry = objectOf(value, where);
    onlyFields(entry, where, PRICE_FIELDS);
    const input = amount(entry, "input", where);
    const output = amount(entry, "output", where);
    if (input === undefined || output === undefined) {
      const missing = input === undefined ? "input" : "output";
      throw new Error(`${where}.${missing} is required`);
    }
    prices.set(model, {
      inputMicrosPerMillion: input,
      outputMicrosPerMillion: output,
      cacheReadMicrosPerMillion: amount(entry, "cache_read", where) ?? input,
      cacheWriteMicrosPerMillion: amount(entry, "cache_write", where) ?? input,
    });
  }
  return prices;
}

/** `{"<tenant>": {"max_cost_micros": n, "period": "day" | "total"}}`; period defaults to day. */
function parseTenantBudgets(raw: string): Map<string, TenantBudget> {
  const budgets = new Map<string, TenantBudget>();
  for (const [tenant, value] of Object.entries(parseJson(raw))) {
    const where = JSON.stringify(tenant);
    checkTenantName(tenant);
    const entry = objectOf(value, where);
    onlyFields(entry, where, ["max_cost_micros", "period"]);
    const maxCostMicros = amount(entry, "max_cost_micros", where);
    if (maxCostMicros === undefined) {
      throw new Error(`${where}.max_cost_micros is required`);
    }
    const period = entry.period ?? "day";
    if (period !== "day" && period !== "total") {
      throw new Error(`${where}.period must be "day" or "total"`);
    }
    budgets.set(tenant, { maxCostMicros, period });
  }
  return budgets;
}

export const BUDGET_VARIABLES = {
  modelPrices: variable(
    "TETHER_MODEL_PRICES",
    undefined,
    parseModelPrices,
    'JSON: model → `{"input","output","cache_read","cache_write"}` micros per million tokens (`"*"`: any other model)',
  ),
  tenantBudgets: variable(
    "TETHER_TENANT_BUDGETS",
    undefined,
    parseTenantBudgets,
    'JSON: tenant → `{"max_cost_micros", "period"}` (period `day` or `total`); its turns stop once it has spent that much',
  ),
} as const;
