// Spend budgets between tether.v1 messages and the domain (ADR 0016): Budget is checked once here
// (a value past the safe integers is refused naming its field; 0 leaves a limit unset), and a
// budget_reached event is named with the wire's enums.
import { create } from "@bufbuild/protobuf";
import type { Budget, BudgetLimit, BudgetReached, BudgetScope } from "../../domain/budgets.js";
import {
  BudgetReached_Limit,
  BudgetReached_Scope,
  BudgetSchema,
  type Budget as BudgetPb,
  type BudgetReached as BudgetReachedPb,
} from "../../gen/tether/v1/turn_pb.js";
import { fromUint64, toUint64 } from "./scalars.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { BudgetReachedSchema } from "../../gen/tether/v1/turn_pb.js";

/** The budget a request sets, or undefined when it sets no limit; `field` names it in refusals. */
export function budgetFromProto(pb: BudgetPb | undefined, field: string): Budget | undefined {
  if (!pb) return undefined;
  const limit = (value: bigint, name: string) =>
    value > 0n ? fromUint64(value, `${field}.${name}`) : undefined;
  const maxInputTokens = limit(pb.maxInputTokens, "max_input_tokens");
  const maxOutputTokens = limit(pb.maxOutputTokens, "max_output_tokens");
  const maxCostMicros = limit(pb.maxCostMicros, "max_cost_micros");
  const budget: Budget = {
    ...(maxInputTokens !== undefined && { maxInputTokens }),
    ...(maxOutputTokens !== undefined && { maxOutputTokens }),
    ...(maxCostMicros !== undefined && { maxCostMicros }),
  };
  return Object.keys(budget).length > 0 ? budget : undefined;
}

export function budgetToProto(b: Budget | undefined): BudgetPb {
  return create(BudgetSchema, {
    maxInputTokens: BigInt(b?.maxInputTokens ?? 0),
    maxOutputTokens: BigInt(b?.maxOutputTokens ?? 0),
    maxCostMicros: BigInt(b?.maxCostMicros ?? 0),
  });
}

const SCOPES: Record<BudgetScope, BudgetReached_Scope> = {
  turn: BudgetReached_Scope.TURN,
  session: BudgetReached_Scope.SESSION,
  tenant: BudgetReached_Scope.TENANT,
};

const LIMITS: Record<BudgetLimit, BudgetReached_Limit> = {
  tokens: BudgetReached_Limit.TOKENS,
  input_tokens: BudgetReached_Limit.INPUT_TOKENS,
  output_tokens: BudgetReached_Limit.OUTPUT_TOKENS,
  cost_micros: BudgetReached_Limit.COST_MICROS,
};

export function budgetReachedToProto(
  r: BudgetReached,
): MessageInitShape<typeof BudgetReachedSchema> & Partial<BudgetReachedPb> {
  return {
    scope: SCOPES[r.scope],
    limit: LIMITS[r.limit],
    max: toUint64(r.max, "budget_reached.max"),
    spent: toUint64(r.spent, "budget_reached.spent"),
    unpricedModel: r.unpricedModel ?? "",
  };
}

/** The outcome's detail for a turn a spend budget stopped. */
export const budgetStopMessage = (r: BudgetReached): string =>
  r.unpricedModel !== undefined
    ? `the ${r.scope} budget limits cost but model "${r.unpricedModel}" has no price in TETHER_MODEL_PRICES`
    : `the ${r.scope} budget is reached: spent ${r.spent} of ${r.max} ${r.limit.replace("_", " ")}`;
