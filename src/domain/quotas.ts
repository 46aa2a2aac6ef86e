// Per-tenant quotas (ADR 0015): the limits an operator configures for a tenant, what the store
// answers when a turn asks to start, and the usage a tenant may read. Tokens are counted as the
// engine counts them for a budget: input + output + cache reads + cache writes (countedTokens).
import { TetherError } from "./errors.js";
import { TENANT_SEPARATOR, type SessionId } from "./ids.js";
import type { StorageQuotaConfig } from "./storage-quotas.js";

export const QUOTA_LIMIT_NAMES = [
  "concurrent_turns",
  "turns_per_minute",
  "tokens_per_minute",
  "tokens_per_day",
  "concurrent_streams",
] as const;
export type QuotaLimitName = (typeof QUOTA_LIMIT_NAMES)[number];

/**
 * Streams (WatchSession, StreamTurn) a tenant may hold open at once on one replica (ADR 0028).
 * Unlike the other limits it always applies: each open stream costs the replica memory (about
 * 85 KB for an idle watch, measured) and a share of its blocking reads, so a tenant with no quota
 * configured gets this default. 256 lets a client follow hundreds of sessions at once, and holds
 * one tenant to about 22 MB of a replica's memory in streams.
 */
export const DEFAULT_CONCURRENT_STREAMS = 256;

/** `reject`: refused at submission while over; `queue`: accepted, and the turn waits. */
export type QuotaMode = "reject" | "queue";

export interface QuotaLimit {
  max: number;
  mode: QuotaMode;
}

/** One tenant's limits; an absent limit does not apply. */
export type TenantQuota = Partial<Record<QuotaLimitName, QuotaLimit>>;

/** The configured quotas: per tenant by name, and `default` for every other tenant. */
export interface QuotaConfig {
  tenants: Readonly<Record<string, TenantQuota>>;
  default: TenantQuota | undefined;
  /** The storage limits set (ADR 0029); absent ones keep DEFAULT_STORAGE_LIMITS. */
  storage?: StorageQuotaConfig;
}

export const NO_QUOTAS: QuotaConfig = { tenants: {}, default: undefined };

export const MINUTE_MS = 60_000;
export const DAY_MS = 24 * 60 * 60_000;

/** The limits of `tenant` (its own, else the default); undefined when none apply. */
export function quotaOf(config: QuotaConfig, tenant: string): TenantQuota | undefined {
  const quota = Object.hasOwn(config.tenants, tenant) ? config.tenants[tenant] : config.default;
  return quota && Object.keys(quota).length > 0 ? quota : undefined;
}

/** The tenant's concurrent_streams limit: its configured one, else the default (always reject). */
export function streamLimitOf(config: QuotaConfig, tenant: string): QuotaLimit {
  return (
    quotaOf(config, tenant)?.concurrent_streams ?? {
      max: DEFAULT_CONCURRENT_STREAMS,
      mode: "reject",
    }
  );
}

/** The tenant a session belongs to: the prefix of its store id (`default` without one). */
export function tenantOfSession(sessionId: SessionId): string {
  const at = sessionId.indexOf(TENANT_SEPARATOR);
  return at < 0 ? "default" : sessionId.slice(0, at);
}

/** What admitTurn and checkTokenQuota answer. */
export type QuotaOutcome =
  | { kind: "admitted"; readmitted: boolean }
  | { kind: "refused"; limit: QuotaLimitName; retryAfterMs: number };

export type TokenQuotaCheck =
  { kind: "within" } | { kind: "over"; limit: QuotaLimitName; retryAfterMs: number };

/** A tenant's counters as the store holds them now; windows are fixed (UTC minute, UTC day). */
export interface QuotaUsage {
  runningTurns: number;
  turnsThisMinute: number;
  tokensThisMinute: number;
  tokensToday: number;
  /** When the current minute window ends (epoch ms, by the store's clock). */
  minuteResetAtMs: number;
  dayResetAtMs: number;
  /** The store's clock when it read the counters. */
  nowMs: number;
  /** Streams this replica holds open for the tenant: counted in process, never by the store. */
  openStreams?: number;
}

/** One limit with its use, for GetQuotaUsage. resetAtMs undefined: it frees as turns end. */
export interface QuotaLimitReport {
  limit: QuotaLimitName;
  mode: QuotaMode;
  max: number;
  used: number;
  resetAtMs: number | undefined;
}

export function usedOf(usage: QuotaUsage, limit: QuotaLimitName): number {
  switch (limit) {
    case "concurrent_turns":
      return usage.runningTurns;
    case "turns_per_minute":
      return usage.turnsThisMinute;
    case "tokens_per_minute":
      return usage.tokensThisMinute;
    case "tokens_per_day":
      return usage.tokensToday;
    case "concurrent_streams":
      return usage.openStreams ?? 0;
  }
}

function resetOf(usage: QuotaUsage, limit: QuotaLimitName): number | undefined {
  if (limit === "concurrent_turns" || limit === "concurrent_streams") return undefined;
  return limit === "tokens_per_day" ? usage.dayResetAtMs : usage.minuteResetAtMs;
}

export function quotaReport(quota: TenantQuota, usage: QuotaUsage): QuotaLimitReport[] {
  return QUOTA_LIMIT_NAMES.flatMap((limit) => {
    const set = quota[limit];
    if (!set) return [];
    return [
      {
        limit,
        mode: set.mode,
        max: set.max,
        used: usedOf(usage, limit),
        resetAtMs: resetOf(usage, limit),
      },
    ];
  });
}

/** How long a caller waits for a concurrency slot before it asks again (slots have no window). */
export const SLOT_RETRY_MS = 1_000;

/**
 * The first limit of `mode` that is used up, with how long until it may free; undefined when none
 * is. Submission uses it for reject-mode limits (the store's admission is the atomic check).
 */
export function exhaustedLimit(
  quota: TenantQuota,
  usage: QuotaUsage,
  mode: QuotaMode,
): { limit: QuotaLimitName; retryAfterMs: number } | undefined {
  for (const limit of QUOTA_LIMIT_NAMES) {
    // Streams are counted where they open (the stream gate), not from the store's counters.
    if (limit === "concurrent_streams") continue;
    const set = quota[limit];
    if (!set || set.mode !== mode || usedOf(usage, limit) < set.max) continue;
    const reset = resetOf(usage, limit);
    return { limit, retryAfterMs: reset === undefined ? SLOT_RETRY_MS : reset - usage.nowMs };
  }
  return undefined;
}

/** RESOURCE_EXHAUSTED at submission: the tenant's reject-mode limit is used up. */
export function quotaExhausted(
  tenant: string,
  limit: QuotaLimitName,
  retryAfterMs: number,
  max: number,
): TetherError {
  return new TetherError("quota_exhausted", `tenant quota ${limit} is used up`, {
    fields: { tenant, limit, max, retryAfterMs },
  });
}
