// TETHER_QUOTAS (JSON) or TETHER_QUOTAS_FILE (a path to the same JSON): per-tenant quota limits,
// validated at start; a bad value refuses the start naming the variable and the field (ADR 0015).
//   { "default": { "concurrent_turns": 4 },
//     "tenants": { "acme": { "turns_per_minute": { "max": 60, "mode": "queue" } } } }
// A limit is its max alone (mode: queue for concurrent_turns, reject for the others) or
// { "max", "mode" }. concurrent_streams (reject only) applies even when not set: its default is
// DEFAULT_CONCURRENT_STREAMS per tenant per replica. The two variables are entries of the one
// schema (ADR 0033); a refusal here says the field, and the reader names the variable.
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
import { inlineOrFile, text, variable, type ConfigReader } from "./config-schema.js";

/** A problem of one field of the document; the reader puts the variable's name before it. */
const refusal = (field: string, problem: string) => new Error(`${field}: ${problem}`);

const isStorageLimit = (key: string): key is (typeof STORAGE_LIMIT_NAMES)[number] =>
  (STORAGE_LIMIT_NAMES as readonly string[]).includes(key);

/** A storage limit (ADR 0029) is always reject: a store cannot queue a write until room frees. */
function storageLimitOf(field: string, raw: unknown): number {
  const { max, mode } = limitOf(field, "tokens_per_day", raw);
  if (mode !== "reject") throw refusal(`${field}.mode`, 'must be "reject"');
  return max;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function limitOf(field: string, name: QuotaLimitName, raw: unknown): QuotaLimit {
  const defaultMode = name === "concurrent_turns" ? "queue" : "reject";
  const spec = typeof raw === "number" ? { max: raw, mode: defaultMode } : raw;
  if (!isObject(spec)) throw refusal(field, "must be a number or { max, mode }");
  for (const key of Object.keys(spec)) {
    if (key !== "max" && key !== "mode")
      throw refusal(`${field}.${key}`, "is not a field of a limit");
  }
  const max = spec.max;
  if (typeof max !== "number" || !Number.isSafeInteger(max) || max < 1) {
    throw refusal(`${field}.max`, "must be an integer of at least 1");
  }
  const mode = spec.mode ?? defaultMode;
  if (mode !== "queue" && mode !== "reject") {
    throw refusal(`${field}.mode`, 'must be "queue" or "reject"');
  }
  // A stream cannot wait for room: past the limit it is refused.
  if (name === "concurrent_streams" && mode !== "reject") {
    throw refusal(`${field}.mode`, 'must be "reject" for concurrent_streams');
  }
  return { max, mode };
}

function tenantQuotaOf(
  field: string,
  raw: unknown,
  storage: Partial<Record<keyof StorageLimits, number>>,
): TenantQuota {
  if (!isObject(raw)) throw refusal(field, "must be an object of limits");
  const quota: TenantQuota = {};
  for (const [key, value] of Object.entries(raw)) {
    if (isStorageLimit(key)) {
      storage[key] = storageLimitOf(`${field}.${key}`, value);
      continue;
    }
    if (!(QUOTA_LIMIT_NAMES as readonly string[]).includes(key)) {
      const names = [...QUOTA_LIMIT_NAMES, ...STORAGE_LIMIT_NAMES];
      throw refusal(`${field}.${key}`, `is not a limit (one of ${names.join(", ")})`);
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
    throw refusal("(document)", `not JSON: ${(error as Error).message}`);
  }
  if (!isObject(raw)) throw refusal("(document)", "must be a JSON object");
  for (const key of Object.keys(raw)) {
    if (key !== "default" && key !== "tenants") {
      throw refusal(key, 'is not a field (use "default" and "tenants")');
    }
  }
  const tenants: Record<string, TenantQuota> = {};
  const storageTenants: Record<string, Partial<StorageLimits>> = {};
  if (raw.tenants !== undefined) {
    if (!isObject(raw.tenants)) throw refusal("tenants", "must be an object");
    for (const [tenant, quota] of Object.entries(raw.tenants)) {
      try {
        checkTenantName(tenant);
      } catch (error) {
        throw refusal(`tenants.${tenant}`, (error as Error).message);
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

export const QUOTA_VARIABLES = {
  quotas: variable(
    "TETHER_QUOTAS",
    undefined,
    text,
    "per-tenant quotas and storage limits (JSON; unset: no quotas, default storage limits), see Tenant quotas",
  ),
  quotasFile: variable(
    "TETHER_QUOTAS_FILE",
    undefined,
    text,
    "a file holding the same JSON, in place of `TETHER_QUOTAS`",
  ),
} as const;

/** The quotas from the environment (none when neither variable is set). */
export function loadQuotaConfig(read: ConfigReader): QuotaConfig {
  const given = inlineOrFile(read, QUOTA_VARIABLES.quotas, QUOTA_VARIABLES.quotasFile);
  if (given === undefined) return NO_QUOTAS;
  return read.check(given.name, () => parseQuotaConfig(given.text));
}
