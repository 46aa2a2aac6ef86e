// TETHER_QUOTAS (JSON) or TETHER_QUOTAS_FILE (a path to the same JSON): per-tenant quota limits,
// validated at start; a bad value refuses the start naming the variable and the field (ADR 0015).
//   { "default": { "concurrent_turns": 4 },
//     "tenants": { "acme": { "turns_per_minute": { "max": 60, "mode": "queue" } } } }
// A limit is its max alone (mode: queue for concurrent_turns, reject for the others) or
// { "max", "mode" }. concurrent_streams (reject only) applies even when not set: its default is
// DEFAULT_CONCURRENT_STREAMS per tenant per replica.
import { readFileSync } from "node:fs";
import {
  NO_QUOTAS,
  QUOTA_LIMIT_NAMES,
  type QuotaConfig,
  type QuotaLimit,
  type QuotaLimitName,
  type TenantQuota,
} from "../domain/quotas.js";
import { checkTenantName } from "../api/tenancy.js";
import { STORAGE_LIMIT_NAMES, type StorageLimits } from "../domain/storage-quotas.js";

const isStorageLimit = (key: string): key is (typeof STORAGE_LIMIT_NAMES)[number] =>
  (STORAGE_LIMIT_NAMES as readonly string[]).includes(key);

/** A storage limit (ADR 0029) is always reject: a store cannot queue a write until room frees. */
function storageLimitOf(field: string, raw: unknown): number {
  const { max, mode } = limitOf(field, "tokens_per_day", raw);
  if (mode !== "reject") throw new QuotaConfigError(`${field}.mode`, 'must be "reject"');
  return max;
}

export class QuotaConfigError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = "QuotaConfigError";
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function limitOf(field: string, name: QuotaLimitName, raw: unknown): QuotaLimit {
  const defaultMode = name === "concurrent_turns" ? "queue" : "reject";
  const spec = typeof raw === "number" ? { max: raw, mode: defaultMode } : raw;
  if (!isObject(spec)) throw new QuotaConfigError(field, "must be a number or { max, mode }");
  for (const key of Object.keys(spec)) {
    if (key !== "max" && key !== "mode")
      throw new QuotaConfigError(`${field}.${key}`, "is not a field of a limit");
  }
  const max = spec.max;
  if (typeof max !== "number" || !Number.isSafeInteger(max) || max < 1) {
    throw new QuotaConfigError(`${field}.max`, "must be an integer of at least 1");
  }
  const mode = spec.mode ?? defaultMode;
  if (mode !== "queue" && mode !== "reject") {
    throw new QuotaConfigError(`${field}.mode`, 'must be "queue" or "reject"');
  }
  // A stream cannot wait for room: past the limit it is refused.
  if (name === "concurrent_streams" && mode !== "reject") {
    throw new QuotaConfigError(`${field}.mode`, 'must be "reject" for concurrent_streams');
  }
  return { max, mode };
}

function tenantQuotaOf(
  field: string,
  raw: unknown,
  storage: Partial<Record<keyof StorageLimits, number>>,
): TenantQuota {
  if (!isObject(raw)) throw new QuotaConfigError(field, "must be an object of limits");
  const quota: TenantQuota = {};
  for (const [key, value] of Object.entries(raw)) {
    if (isStorageLimit(key)) {
      storage[key] = storageLimitOf(`${field}.${key}`, value);
      continue;
    }
    if (!(QUOTA_LIMIT_NAMES as readonly string[]).includes(key)) {
      const names = [...QUOTA_LIMIT_NAMES, ...STORAGE_LIMIT_NAMES];
      throw new QuotaConfigError(`${field}.${key}`, `is not a limit (one of ${names.join(", ")})`);
    }
    const name = key as QuotaLimitName;
    quota[name] = limitOf(`${field}.${key}`, name, value);
  }
  return quota;
}

export function parseQuotaConfig(json: string): QuotaConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new QuotaConfigError("(document)", `not JSON: ${(error as Error).message}`);
  }
  if (!isObject(raw)) throw new QuotaConfigError("(document)", "must be a JSON object");
  for (const key of Object.keys(raw)) {
    if (key !== "default" && key !== "tenants") {
      throw new QuotaConfigError(key, 'is not a field (use "default" and "tenants")');
    }
  }
  const tenants: Record<string, TenantQuota> = {};
  const storageTenants: Record<string, Partial<StorageLimits>> = {};
  if (raw.tenants !== undefined) {
    if (!isObject(raw.tenants)) throw new QuotaConfigError("tenants", "must be an object");
    for (const [tenant, quota] of Object.entries(raw.tenants)) {
      try {
        checkTenantName(tenant);
      } catch (error) {
        throw new QuotaConfigError(`tenants.${tenant}`, (error as Error).message);
      }
      const storage = (storageTenants[tenant] = {});
      tenants[tenant] = tenantQuotaOf(`tenants.${tenant}`, quota, storage);
    }
  }
  const storageDefault = {};
  const quotas: QuotaConfig = {
    tenants,
    default:
      raw.default === undefined ? undefined : tenantQuotaOf("default", raw.default, storageDefault),
  };
  // Only where a storage limit is set: a tenant listed without any keeps the defaults.
  const anyStorage = [storageDefault, ...Object.values(storageTenants)].some(
    (limits) => Object.keys(limits).length > 0,
  );
  if (anyStorage) {
    const storageTenantsSet = Object.fromEntries(
      Object.entries(storageTenants).filter(([, limits]) => Object.keys(limits).length > 0),
    );
    quotas.storage = { tenants: storageTenantsSet, default: storageDefault };
  }
  return quotas;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The quotas from the environment (none when neither variable is set). */
export function loadQuotaConfig(
  env: Env,
  fail: (variable: string, problem: string) => Error,
): QuotaConfig {
  const inline = env.TETHER_QUOTAS?.trim() || undefined;
  const file = env.TETHER_QUOTAS_FILE?.trim() || undefined;
  if (inline !== undefined && file !== undefined) {
    throw fail("TETHER_QUOTAS", "set it or TETHER_QUOTAS_FILE, not both");
  }
  const variable = file === undefined ? "TETHER_QUOTAS" : "TETHER_QUOTAS_FILE";
  let json = inline;
  if (file !== undefined) {
    try {
      json = readFileSync(file, "utf8");
    } catch (error) {
      throw fail(variable, `cannot read ${file}: ${(error as Error).message}`);
    }
  }
  if (json === undefined) return NO_QUOTAS;
  try {
    return parseQuotaConfig(json);
  } catch (error) {
    if (error instanceof QuotaConfigError) throw fail(variable, error.message);
    throw error;
  }
}
