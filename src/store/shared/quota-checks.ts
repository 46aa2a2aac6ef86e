// What crosses the quota port is validated once, here, for every backend (its check table,
// ADR 0034): a bad tenant, holder, limit or count is invalid_argument naming the field, before
// any counter is read.
import { invalidArgument } from "../../domain/errors.js";
import { checkId } from "../../domain/ids.js";
import { QUOTA_LIMIT_NAMES, type TenantQuota } from "../../domain/quotas.js";
import type { QuotaStore } from "../../ports/quota-store.js";
import type { CheckTable } from "./checked.js";

/** Tenant names end up inside a hash tag `{quota:<tenant>}`: braces and spaces are refused. */
export function checkTenant(raw: unknown): string {
  const tenant = checkId("tenant", raw);
  if (tenant.length > 64) throw invalidArgument("tenant", "must be at most 64 characters");
  return tenant;
}

function checkHolder(raw: unknown): string {
  return checkId("holder", raw);
}

function positiveInteger(field: string, raw: unknown, min: number): number {
  if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < min) {
    throw invalidArgument(field, `must be an integer of at least ${min}`);
  }
  return raw;
}

const checkTtl = (raw: unknown): number => positiveInteger("slot_ttl_ms", raw, 1);
const checkTokens = (raw: unknown): number => positiveInteger("tokens", raw, 0);

function checkLimits(raw: unknown): TenantQuota {
  if (typeof raw !== "object" || raw === null) throw invalidArgument("limits", "must be an object");
  const limits = raw as Record<string, unknown>;
  for (const [name, value] of Object.entries(limits)) {
    if (value === undefined) continue;
    if (!(QUOTA_LIMIT_NAMES as readonly string[]).includes(name)) {
      throw invalidArgument(`limits.${name}`, "is not a quota limit");
    }
    const limit = value as { max?: unknown; mode?: unknown };
    positiveInteger(`limits.${name}.max`, limit.max, 1);
    if (limit.mode !== "queue" && limit.mode !== "reject") {
      throw invalidArgument(`limits.${name}.mode`, "must be queue or reject");
    }
  }
  return limits as TenantQuota;
}

export const quotaChecks = {
  admitTurn: (admission) => {
    checkTenant(admission.tenant);
    checkHolder(admission.holder);
    checkLimits(admission.limits);
    checkTtl(admission.slotTtlMs);
  },
  countTokens: (tenant, tokens) => {
    checkTenant(tenant);
    checkTokens(tokens);
  },
  checkTokenQuota: (tenant, limits) => {
    checkTenant(tenant);
    checkLimits(limits);
  },
  releaseTurnSlot: (tenant, holder) => {
    checkTenant(tenant);
    checkHolder(holder);
  },
  renewTurnSlots: (tenant, holders, ttlMs) => {
    checkTenant(tenant);
    checkTtl(ttlMs);
    if (!Array.isArray(holders)) throw invalidArgument("holders", "must be a list");
    holders.forEach(checkHolder);
  },
  readQuotaUsage: checkTenant,
} satisfies CheckTable<QuotaStore>;
