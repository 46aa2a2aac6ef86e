// What a turn's commit may carry of its tenant's limits (ADR 0038): the quota slot it gives back,
// the tokens and the spend of its last model call, applied in the commit's own step where the
// store's step reaches the tenant's counters (standalone Redis, Sentinel, memory). Each part is
// what the separate step would do: QuotaStore.releaseTurnSlot, QuotaStore.countTokens and
// TenantBudgetStore.chargeTenantSpend.

export interface TenantCommitCharges {
  tenant: string;
  /** The turn's quota slot holder, released as releaseTurnSlot releases it. */
  releaseSlot?: string;
  /** Tokens added to the tenant's quota counters, as countTokens adds them (> 0). */
  quotaTokens?: number;
  /** Micros added to the tenant's spend in `window`, as chargeTenantSpend adds them (> 0). */
  spend?: { window: string; costMicros: number };
}
