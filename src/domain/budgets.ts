// Spend budgets (ADR 0016): what a session may spend in tokens and cost, what a model's tokens
// cost, and the record of a budget that stopped a turn. Plain data and arithmetic: the engine,
// the runtime, the API and the configuration all share these shapes.
import type { UsageTotals } from "./usage.js";

/** Limits on a session's cumulative spend (every committed turn plus the running one). */
export interface Budget {
  maxInputTokens?: number;
  maxOutputTokens?: number;
  maxCostMicros?: number;
}

/** Which budget a limit belongs to. */
export type BudgetScope = "turn" | "session" | "tenant";

/** Which quantity a limit bounds. */
export type BudgetLimit = "tokens" | "input_tokens" | "output_tokens" | "cost_micros";

/** A budget that is reached: the turn stops before its next model call. */
export interface BudgetReached {
  scope: BudgetScope;
  limit: BudgetLimit;
  /** The limit's value. */
  max: number;
  /** What was spent when the turn stopped (at or over `max`, unless `unpricedModel` is set). */
  spent: number;
  /** A cost limit applies but this model has no price: the turn may not call it (ADR 0016). */
  unpricedModel?: string;
}

/** Micro-units of currency per million tokens of each kind. */
export interface ModelPrice {
  inputMicrosPerMillion: number;
  outputMicrosPerMillion: number;
  cacheReadMicrosPerMillion: number;
  cacheWriteMicrosPerMillion: number;
}

/** A tenant's cap on cost (TETHER_TENANT_BUDGETS), per UTC day or over all time. */
export interface TenantBudget {
  maxCostMicros: number;
  period: "day" | "total";
}

/** The largest value any budget field may hold: within an IEEE double's exact integers. */
export const MAX_BUDGET_VALUE = Number.MAX_SAFE_INTEGER;

/**
 * What `usage` costs at `price`, in micros, rounded up: the turn's cost is this over its whole
 * usage, so a turn parked and resumed costs what it would have in one run.
 */
export function costMicros(usage: UsageTotals, price: ModelPrice): number {
  const scaled =
    usage.inputTokens * price.inputMicrosPerMillion +
    usage.outputTokens * price.outputMicrosPerMillion +
    usage.cacheReadTokens * price.cacheReadMicrosPerMillion +
    usage.cacheWriteTokens * price.cacheWriteMicrosPerMillion;
  return Math.ceil(scaled / 1_000_000);
}

/** Field by field, the lower of two budgets: a turn's own budget may only tighten the agent's. */
export function tighterBudget(a: Budget | undefined, b: Budget | undefined): Budget | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const low = (x: number | undefined, y: number | undefined) =>
    x === undefined ? y : y === undefined ? x : Math.min(x, y);
  const maxInputTokens = low(a.maxInputTokens, b.maxInputTokens);
  const maxOutputTokens = low(a.maxOutputTokens, b.maxOutputTokens);
  const maxCostMicros = low(a.maxCostMicros, b.maxCostMicros);
  return {
    ...(maxInputTokens !== undefined && { maxInputTokens }),
    ...(maxOutputTokens !== undefined && { maxOutputTokens }),
    ...(maxCostMicros !== undefined && { maxCostMicros }),
  };
}

/** True when the budget sets no limit at all. */
export const isEmptyBudget = (b: Budget | undefined): boolean =>
  b === undefined ||
  (b.maxInputTokens === undefined &&
    b.maxOutputTokens === undefined &&
    b.maxCostMicros === undefined);

/** The first limit of `budget` that `spent` reached, checked in a fixed order. */
export function reachedLimit(
  scope: BudgetScope,
  budget: Budget,
  spent: { inputTokens: number; outputTokens: number; costMicros: number | undefined },
): BudgetReached | undefined {
  const checks: [BudgetLimit, number | undefined, number | undefined][] = [
    ["input_tokens", budget.maxInputTokens, spent.inputTokens],
    ["output_tokens", budget.maxOutputTokens, spent.outputTokens],
    ["cost_micros", budget.maxCostMicros, spent.costMicros],
  ];
  for (const [limit, max, used] of checks) {
    if (max !== undefined && used !== undefined && used >= max) {
      return { scope, limit, max, spent: used };
    }
  }
  return undefined;
}
