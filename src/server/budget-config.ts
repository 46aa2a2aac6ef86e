// Spend budget configuration (ADR 0016): TETHER_MODEL_PRICES and TETHER_TENANT_BUDGETS, JSON
// objects checked once at start; a bad value names the variable and the field.
import { MAX_BUDGET_VALUE, type ModelPrice, type TenantBudget } from "../domain/budgets.js";

/** Thrown with the variable's name; config.ts turns it into its ConfigError. */
export class BudgetConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(problem);
  }
}

type Raw = Record<string, unknown>;

function objectOf(variable: string, value: unknown, what: string): Raw {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BudgetConfigError(variable, `${what} must be a JSON object`);
  }
  return value as Raw;
}

function parseJson(variable: string, raw: string): Raw {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new BudgetConfigError(variable, `is not valid JSON (${(error as Error).message})`);
  }
  return objectOf(variable, parsed, "the value");
}

function onlyFields(variable: string, entry: Raw, where: string, allowed: readonly string[]): void {
  for (const key of Object.keys(entry)) {
    if (!allowed.includes(key)) {
      throw new BudgetConfigError(
        variable,
        `${where}.${key} is not a field (expected ${allowed.join(", ")})`,
      );
    }
  }
}

function amount(variable: string, entry: Raw, field: string, where: string): number | undefined {
  const value = entry[field];
  if (value === undefined) return undefined;
  if (
    typeof value !== "number" ||
    !Number.isInteger(value) ||
    value < 0 ||
    value > MAX_BUDGET_VALUE
  ) {
    throw new BudgetConfigError(
      variable,
      `${where}.${field} must be an integer between 0 and ${MAX_BUDGET_VALUE}`,
    );
  }
  return value;
}

const PRICE_FIELDS = ["input", "output", "cache_read", "cache_write"] as const;

/**
 * `{"<model>": {"input": n, "output": n, "cache_read": n, "cache_write": n}}` in micros per
 * million tokens; input and output are required, cache prices default to the input price (so an
 * unlisted cache price never makes a turn look cheaper than it was). "*" prices any other model.
 */
export function parseModelPrices(raw: string | undefined): Map<string, ModelPrice> {
  const variable = "TETHER_MODEL_PRICES";
  const prices = new Map<string, ModelPrice>();
  if (raw === undefined) return prices;
  for (const [model, value] of Object.entries(parseJson(variable, raw))) {
    const where = JSON.stringify(model);
    if (model === "") throw new BudgetConfigError(variable, "a model name must not be empty");
    const entry = objectOf(variable, value, where);
    onlyFields(variable, entry, where, PRICE_FIELDS);
    const input = amount(variable, entry, "input", where);
    const output = amount(variable, entry, "output", where);
    if (input === undefined || output === undefined) {
      const missing = input === undefined ? "input" : "output";
      throw new BudgetConfigError(variable, `${where}.${missing} is required`);
    }
    prices.set(model, {
      inputMicrosPerMillion: input,
      outputMicrosPerMillion: output,
      cacheReadMicrosPerMillion: amount(variable, entry, "cache_read", where) ?? input,
      cacheWriteMicrosPerMillion: amount(variable, entry, "cache_write", where) ?? input,
    });
  }
  return prices;
}

/** `{"<tenant>": {"max_cost_micros": n, "period": "day" | "total"}}`; period defaults to day. */
export function parseTenantBudgets(
  raw: string | undefined,
  checkTenant: (tenant: string) => string,
): Map<string, TenantBudget> {
  const variable = "TETHER_TENANT_BUDGETS";
  const budgets = new Map<string, TenantBudget>();
  if (raw === undefined) return budgets;
  for (const [tenant, value] of Object.entries(parseJson(variable, raw))) {
    const where = JSON.stringify(tenant);
    try {
      checkTenant(tenant);
    } catch (error) {
      throw new BudgetConfigError(variable, (error as Error).message);
    }
    const entry = objectOf(variable, value, where);
    onlyFields(variable, entry, where, ["max_cost_micros", "period"]);
    const maxCostMicros = amount(variable, entry, "max_cost_micros", where);
    if (maxCostMicros === undefined) {
      throw new BudgetConfigError(variable, `${where}.max_cost_micros is required`);
    }
    const period = entry.period ?? "day";
    if (period !== "day" && period !== "total") {
      throw new BudgetConfigError(variable, `${where}.period must be "day" or "total"`);
    }
    budgets.set(tenant, { maxCostMicros, period });
  }
  return budgets;
}
