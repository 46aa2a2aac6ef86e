// The engine's view of spend budgets (ADR 0016): asked before every model call whether the turn
// may make it, told after it what the call used. The runtime implements it over the session's
// committed spend and the tenant's charge in the store; the engine stays pure.
import type { BudgetReached, ModelPrice, TenantBudget } from "../domain/budgets.js";
import type { UsageTotals } from "../domain/usage.js";

export type SpendDecision = { go: true } | { go: false; reached: BudgetReached };

export interface SpendGuard {
  /** Before a model call, with the turn's usage so far (a resumed turn's included). */
  beforeModelCall(turnUsage: UsageTotals): SpendDecision | Promise<SpendDecision>;
  /** After a model call that returned: that call's usage and the turn's new total. */
  afterModelCall(callUsage: UsageTotals, turnUsage: UsageTotals): void | Promise<void>;
}

/** A tenant's cumulative cost in one window (a UTC day, or "total"), charged atomically. */
export interface TenantSpendCharge {
  tenant: string;
  /** "total", or a UTC day as YYYY-MM-DD: each window is its own counter. */
  window: string;
  /** Micros to add; 0 reads the counter without changing it. */
  costMicros: number;
}

export interface TenantBudgetStore {
  /** Adds `costMicros` to the tenant's window (atomic, never lost to a race); the new total. */
  chargeTenantSpend(charge: TenantSpendCharge): Promise<number>;
}

/** What the operator configured: prices by model ("*" prices any other) and tenant budgets. */
export interface SpendPolicy {
  /** The model a turn that names none calls (the provider's default), for its price. */
  defaultModel: string;
  prices: ReadonlyMap<string, ModelPrice>;
  tenants: ReadonlyMap<string, TenantBudget>;
  store: TenantBudgetStore;
}
