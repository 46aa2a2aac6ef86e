// The limits room: quotas (a tenant's rate windows, ADR 0015) and budgets (spend caps, ADR 0016).
// A turn's admission to its tenant's quota slots (quota-admission.ts), the provider that counts
// and waits on the token quota (quota-provider.ts), and the budget guard the engine asks before
// every model call with the cost a turn records (budget-guard.ts). It imports no other room.
export { admitToQuota, type QuotaAdmission, type SlotKeeper } from "./quota-admission.js";
export { withQuotaCounting } from "./quota-provider.js";
export { createBudgetGuard, spendWindow, turnCost, type BudgetPolicy } from "./budget-guard.js";
export { createTurnCharges, type TurnCharges } from "./turn-charges.js";
