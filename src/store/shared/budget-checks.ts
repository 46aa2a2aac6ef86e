// The tenant spend store's check table (ADR 0016, ADR 0034), shared by both backends so bad input
// gets the same typed error everywhere.
import { invalidArgument } from "../../domain/errors.js";
import type { TenantBudgetStore, TenantCharge } from "../../ports/budget-guard.js";
import type { CheckTable } from "./checked.js";
import { checkCount } from "./validate.js";

const TENANT = /^[A-Za-z0-9._-]{1,64}$/u;
const WINDOW = /^(?:total|\d{4}-\d{2}-\d{2})$/u;

function checkTenantCharge(charge: TenantCharge): void {
  if (typeof charge?.tenant !== "string" || !TENANT.test(charge.tenant)) {
    throw invalidArgument("tenant", "must be 1-64 characters of letters, digits, '.', '_', '-'");
  }
  if (typeof charge.window !== "string" || !WINDOW.test(charge.window)) {
    throw invalidArgument("window", 'must be "total" or a UTC day as YYYY-MM-DD');
  }
  checkCount("cost_micros", charge.costMicros, 0);
}

export const budgetChecks = {
  chargeTenantSpend: checkTenantCharge,
} satisfies CheckTable<TenantBudgetStore>;
