// Per-tenant storage limits (ADR 0029): how much one tenant may keep in the store, so that no
// tenant can fill it for the others. Unlike the turn quotas (quotas.ts) they always apply, with
// the defaults below unless TETHER_QUOTAS sets other values, and a limit is always `reject`.
import { TetherError } from "./errors.js";

export const STORAGE_LIMIT_NAMES = [
  "sessions",
  "agents",
  "schedules",
  "webhook_endpoints",
  "session_metadata_bytes",
  "metadata_history_bytes",
] as const;
export type StorageLimitName = (typeof STORAGE_LIMIT_NAMES)[number];

/** The limits counted per tenant as a set of ids (the store's storage slots). */
export const COUNTED_KINDS = ["sessions", "agents", "schedules"] as const;
export type CountedKind = (typeof COUNTED_KINDS)[number];

export type StorageLimits = Readonly<Record<StorageLimitName, number>>;

const MIB = 1024 * 1024;

/**
 * Generous for real use, small enough that one tenant cannot fill a store: 10,000 sessions of at
 * most 1 MiB of metadata and 8 MiB of metadata history each.
 */
export const DEFAULT_STORAGE_LIMITS: StorageLimits = {
  sessions: 10_000,
  agents: 1_000,
  schedules: 1_000,
  webhook_endpoints: 20,
  session_metadata_bytes: MIB,
  metadata_history_bytes: 8 * MIB,
};

/** What TETHER_QUOTAS sets, per tenant by name and `default`; each absent limit keeps its default. */
export interface StorageQuotaConfig {
  tenants: Readonly<Record<string, Partial<StorageLimits>>>;
  default: Partial<StorageLimits> | undefined;
}

export function storageLimitsOf(
  config: StorageQuotaConfig | undefined,
  tenant: string,
): StorageLimits {
  const own =
    config && Object.hasOwn(config.tenants, tenant) ? config.tenants[tenant] : config?.default;
  return { ...DEFAULT_STORAGE_LIMITS, ...own };
}

/** The bytes a metadata map (or patch) takes, as the limits count them: keys plus values, UTF-8. */
export function metadataBytes(metadata: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const [key, value] of Object.entries(metadata)) {
    total += utf8Length(key) + utf8Length(value);
  }
  return total;
}

/** UTF-8 length without encoding (Lua's `#` counts the same bytes). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4; // a surrogate pair: one 4-byte code point
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** The per-session metadata limits a commit carries to the store (RuntimeCommit.metadataLimits). */
export interface MetadataLimits {
  /** The session's metadata after the patch: keys plus values, bytes. */
  maxBytes: number;
  /** Every revision's patch the session keeps (its metadata history), bytes. */
  maxHistoryBytes: number;
}

/** One storage limit with its use, for GetQuotaUsage; per-session byte limits report 0 used. */
export interface StorageUsage {
  limit: StorageLimitName;
  max: number;
  used: number;
}

/** RESOURCE_EXHAUSTED: the store refused a write past a storage limit and wrote nothing. */
export function storageQuotaExhausted(
  tenant: string,
  limit: StorageLimitName,
  max: number,
): TetherError {
  return new TetherError("quota_exhausted", `tenant storage limit ${limit} is used up`, {
    // Nothing frees it by waiting: a delete (or a smaller write) does.
    fields: { tenant, limit, max, retryAfterMs: 0 },
  });
}
