// Where a turn meets its spend budgets (ADR 0016): the engine's guard, and the cost its commit
// records. Kept apart so turn-execution.ts wires both in with a line each.
import type { TurnResult } from "../../engine/index.js";
import type { BudgetGuard } from "../../ports/budget-guard.js";
import { createBudgetGuard, turnCost, type TurnCharges } from "../limits/index.js";
import type { TenantCommitCharges } from "../../domain/tenant-charges.js";
import type { TurnRun } from "./turn-run.js";

/** The engine option of the turn's guard; none when no budget applies. */
export function budgetGuardOf(run: TurnRun): { budgetGuard?: BudgetGuard } {
  const { deps, prep } = run;
  const guard = createBudgetGuard({
    policy: deps.budgets,
    sessionId: prep.sessionId,
    settings: prep.settings,
    snapshot: prep.snapshot,
    nowMs: () => deps.clock.nowMs(),
    ...(run.job.charges && { charges: run.job.charges }),
    logger: deps.logger,
  });
  return guard ? { budgetGuard: guard } : {};
}

/** The turn's cost at its model's price, for its commit and its turn_completed event. */
export function costOf(run: TurnRun, result: Pick<TurnResult, "usage">): { costMicros?: number } {
  const cost = turnCost(run.deps.budgets, run.prep.settings, result.usage);
  return cost === undefined || cost === 0 ? {} : { costMicros: cost };
}

/** The commit's tenant charges (ADR 0038): none where the store does not carry them. */
export function withTenantCharges(charges: TurnCharges | undefined): {
  tenantCharges?: TenantCommitCharges;
} {
  const carried = charges?.forCommit();
  return carried ? { tenantCharges: carried } : {};
}
