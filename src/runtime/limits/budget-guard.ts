// The runtime's budget guard (ADR 0016; the engine's BudgetGuard port): before every model call it compares the session's spend
// (committed turns plus the running one) with the session budget, and the tenant's charged spend
// with the tenant budget; after every call it charges the call's cost to the tenant in the store
// (held for the turn's commit where it carries it, ADR 0038).
import {
  costMicros,
  reachedLimit,
  type Budget,
  type BudgetReached,
  type ModelPrice,
  type TenantBudget,
} from "../../domain/budgets.js";
import type { SessionId } from "../../domain/ids.js";
import { tenantOfSession } from "../../domain/quotas.js";
import type { SessionSnapshot } from "../../domain/session.js";
import { ZERO_USAGE, type UsageTotals } from "../../domain/usage.js";
import type { BudgetDecision, BudgetGuard, BudgetPolicy } from "../../ports/budget-guard.js";
import type { TurnSettings } from "../../domain/turn-settings.js";
import { createTurnCharges, type TurnCharges } from "./turn-charges.js";

export type { BudgetPolicy };

/** The price of the model a turn calls; undefined when it has none. */
export function priceOf(
  policy: BudgetPolicy | undefined,
  model: string | undefined,
): ModelPrice | undefined {
  if (policy === undefined) return undefined;
  return policy.prices.get(model ?? policy.defaultModel) ?? policy.prices.get("*");
}

/** What a turn's usage costs at its model's price; undefined when the model has no price. */
export function turnCost(
  policy: BudgetPolicy | undefined,
  settings: TurnSettings,
  usage: UsageTotals,
): number | undefined {
  const price = priceOf(policy, settings.model);
  return price === undefined ? undefined : costMicros(usage, price);
}

/** The spend window a tenant budget counts in at `nowMs`: the UTC day, or "total". */
export function spendWindow(
  budget: Pick<TenantBudget, "period"> | undefined,
  nowMs: number,
): string {
  return budget?.period === "day" ? new Date(nowMs).toISOString().slice(0, 10) : "total";
}

const GO: BudgetDecision = { go: true };

const minus = (a: UsageTotals, b: UsageTotals): UsageTotals => ({
  inputTokens: a.inputTokens - b.inputTokens,
  outputTokens: a.outputTokens - b.outputTokens,
  cacheReadTokens: a.cacheReadTokens - b.cacheReadTokens,
  cacheWriteTokens: a.cacheWriteTokens - b.cacheWriteTokens,
  reasoningTokens: a.reasoningTokens - b.reasoningTokens,
});

export interface BudgetGuardInput {
  policy: BudgetPolicy | undefined;
  sessionId: SessionId;
  settings: TurnSettings;
  snapshot: SessionSnapshot | undefined;
  nowMs: () => number;
  /** The turn's charges (ADR 0038); absent: each charge and read is its own step. */
  charges?: TurnCharges;
  logger: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
}

/** The guard of one turn; undefined when neither the session nor its tenant has a budget. */
export function createBudgetGuard(input: BudgetGuardInput): BudgetGuard | undefined {
  const { policy, sessionId, settings, snapshot, logger } = input;
  const budget: Budget | undefined = settings.budget;
  const tenant = tenantOfSession(sessionId);
  const tenantBudget = policy?.tenants.get(tenant);
  if (budget === undefined && tenantBudget === undefined) return undefined;
  const model = settings.model ?? policy?.defaultModel ?? "";
  const price = priceOf(policy, settings.model);
  const committed = snapshot?.usage ?? ZERO_USAGE;
  const committedCost = snapshot?.costMicros ?? 0;
  const charges = input.charges ?? createTurnCharges({ sessionId, spend: policy?.store, logger });
  const window = () => spendWindow(tenantBudget, input.nowMs());

  const sessionCheck = (turnUsage: UsageTotals): BudgetReached | undefined => {
    if (budget === undefined) return undefined;
    const turnCostNow = price === undefined ? undefined : costMicros(turnUsage, price);
    const spent = {
      inputTokens: committed.inputTokens + turnUsage.inputTokens,
      outputTokens: committed.outputTokens + turnUsage.outputTokens,
      costMicros: turnCostNow === undefined ? undefined : committedCost + turnCostNow,
    };
    const reached = reachedLimit("session", budget, spent);
    if (reached || budget.maxCostMicros === undefined || price !== undefined) return reached;
    return unpriced("session", budget.maxCostMicros, committedCost, model);
  };

  const tenantCheck = async (): Promise<BudgetReached | undefined> => {
    if (policy === undefined || tenantBudget === undefined) return undefined;
    const max = tenantBudget.maxCostMicros;
    try {
      // With the last call's cost held for the commit, charging it answers the total (ADR 0038).
      const spent = await charges.readSpend(window());
      if (spent >= max) return { scope: "tenant", limit: "cost_micros", max, spent };
      return price === undefined ? unpriced("tenant", max, spent, model) : undefined;
    } catch (error) {
      // An unreadable counter does not stop the turn: the store is down, so its commit would
      // fail anyway, and a budget must not turn a blip into a refused call.
      logger.warn({ sessionId, tenant, error }, "tenant spend not read; the model call goes on");
      return undefined;
    }
  };

  return {
    async beforeModelCall(turnUsage) {
      const reached = sessionCheck(turnUsage) ?? (await tenantCheck());
      if (reached) logger.info({ sessionId, tenant, ...reached }, "budget reached");
      return reached ? { go: false, reached } : GO;
    },
    async afterModelCall(callUsage, turnUsage) {
      if (policy === undefined || tenantBudget === undefined || price === undefined) return;
      // The difference of the turn's cost before and after, so a turn's charges add up to its
      // committed cost exactly, whatever the rounding of a single call.
      const charge = costMicros(turnUsage, price) - costMicros(minus(turnUsage, callUsage), price);
      if (charge <= 0) return;
      // Held for the commit where it carries it, else charged now (a failure is logged there).
      await charges.chargeSpend(window(), charge);
    },
  };
}

/** A cost limit that cannot be checked: the model has no price, so the turn may not call it. */
function unpriced(
  scope: BudgetReached["scope"],
  max: number,
  spent: number,
  model: string,
): BudgetReached {
  return { scope, limit: "cost_micros", max, spent, unpricedModel: model };
}
