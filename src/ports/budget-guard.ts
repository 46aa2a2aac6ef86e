// The engine's view of budgets (ADR 0016, glossary in ADR 0036): asked before every model call
// whether the turn may make it, told after it what the call used. The runtime implements it over
// the session's committed spend and the tenant's spend in the store; the engine stays pure.
import type { BudgetReached, ModelPrice, TenantBudget } from "../domain/budgets.js";
import type { UsageTotals } from "../domain/usage.js";

export type BudgetDecision = { go: true } | { go: false; reached: BudgetReached };

export interface BudgetGuard {
  /** Before a model call, with the turn's usage so far (a resumed turn's included). */
  beforeModelCall(turnUsage: UsageTotals): BudgetDecision | Promise<BudgetDecision>;
  /** After a model call that returned: that call's usage and the turn's new total. */
  afterModelCall(callUsage: UsageTotals, turnUsage: UsageTotals): void | Promise<void>;
}

/** One charge to a tenant's spend in one window (a UTC day, or "total"), added atomically. */
export interface TenantCharge {
  tenant: string;
  /** "total", or a UTC day as YYYY-MM-DD: each window is its own counter. */
  window: string;
  /** Micros to add; 0 reads the counter without changing it. */
  costMicros: number;
}

export interface TenantBudgetStore {
  /** Adds `costMicros` to the tenant's window (atomic, never lost to a race); the new total. */
  chargeTenantSpend(charge: TenantCharge): Promise<number>;
}

/** The budgets the operator configured: prices by model ("*" prices any other), tenant budgets. */
export interface BudgetPolicy {
  /** The model a turn that names none calls (the provider's default), for its price. */
  defaultModel: string;
  prices: ReadonlyMap<string, ModelPrice>;
  tenants: ReadonlyMap<string, TenantBudget>;
  store: TenantBudgetStore;
}
