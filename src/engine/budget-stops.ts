// The two ways a budget ends a turn: its token cap (maxTurnTokens, the wire's token_budget),
// checked before and after every model call, and the budget guard's session and tenant budgets
// (ADR 0016), asked before every model call and announced by a budget_reached event.
import type { BudgetReachedEvent, TurnEvent } from "../domain/turn-events.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import { countedTokens, type UsageTotals } from "../domain/usage.js";
import type { BudgetGuard } from "../ports/budget-guard.js";

type BudgetStop = Extract<TurnOutcome, { reason: "budget_exhausted" }>;

/** The budget_exhausted outcome once the turn's tokens reach its token budget. */
export function turnTokenStop(
  total: UsageTotals,
  maxTurnTokens: number | undefined,
): BudgetStop | undefined {
  const used = countedTokens(total);
  if (maxTurnTokens === undefined || used < maxTurnTokens) return undefined;
  return {
    kind: "stopped",
    reason: "budget_exhausted",
    usedTokens: used,
    budgetTokens: maxTurnTokens,
  };
}

/** The budget_reached event of a turn token cap stop: the turn's own budget, all its tokens. */
export const turnBudgetReached = (stop: BudgetStop): BudgetReachedEvent => ({
  type: "budget_reached",
  scope: "turn",
  limit: "tokens",
  max: stop.budgetTokens,
  spent: stop.usedTokens,
});

/**
 * The budget_exhausted outcome when the budget guard refuses the next model call, after its
 * budget_reached event; the turn's usage so far stays in its result and is committed.
 */
export async function guardStop(
  guard: BudgetGuard | undefined,
  total: UsageTotals,
  maxTurnTokens: number | undefined,
  emit: (event: TurnEvent) => void | Promise<void>,
): Promise<BudgetStop | undefined> {
  if (guard === undefined) return undefined;
  const decision = await guard.beforeModelCall(total);
  if (decision.go) return undefined;
  const { reached } = decision;
  await emit({ type: "budget_reached", ...reached });
  return {
    kind: "stopped",
    reason: "budget_exhausted",
    usedTokens: countedTokens(total),
    budgetTokens: maxTurnTokens ?? 0,
    reached,
  };
}
