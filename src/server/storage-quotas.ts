// Puts the per-tenant storage limits (ADR 0029) around a built store: sessions and agents,
// schedules and webhook endpoints are admitted against the tenant's limits (TETHER_QUOTAS, else
// the defaults), and GetQuotaUsage reads their use.
import type { QuotaConfig } from "../domain/quotas.js";
import {
  STORAGE_LIMIT_NAMES,
  storageLimitsOf,
  type StorageUsage,
} from "../domain/storage-quotas.js";
import type { StorageQuotaStore } from "../ports/storage-quota-store.js";
import type { WebhookStore } from "../ports/webhook-store.js";
import {
  withEndpointQuotas,
  withScheduleQuotas,
  withStorageQuotas,
} from "../store/shared/storage-quota-store.js";
import type { BuiltStore } from "./build-store.js";

export function applyStorageQuotas(built: BuiltStore, config: QuotaConfig): BuiltStore {
  const options = {
    slots: built.storageQuotas,
    limitsOf: (tenant: string) => storageLimitsOf(config.storage, tenant),
  };
  return {
    ...built,
    store: withStorageQuotas(built.store, options),
    schedules: withScheduleQuotas(built.schedules, options),
    webhooks: withEndpointQuotas(built.webhooks, options),
  };
}

/** Every storage limit of `tenant` with its use now (per-session byte limits: 0 used). */
export function storageUsageReader(
  slots: StorageQuotaStore,
  webhooks: WebhookStore,
  config: QuotaConfig,
): (tenant: string) => Promise<StorageUsage[]> {
  return async (tenant) => {
    const limits = storageLimitsOf(config.storage, tenant);
    const [counts, endpoints] = await Promise.all([
      slots.countStorageSlots(tenant),
      webhooks.listEndpoints(tenant),
    ]);
    const used: Record<string, number> = { ...counts, webhook_endpoints: endpoints.length };
    return STORAGE_LIMIT_NAMES.map((limit) => ({
      limit,
      max: limits[limit],
      used: used[limit] ?? 0,
    }));
  };
}
