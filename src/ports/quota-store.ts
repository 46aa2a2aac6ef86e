// The quota port: per-tenant counters shared by every replica (ADR 0015). Each operation is one
// atomic step on the tenant's counters (one Lua script on Redis, in the tenant's own slot); the
// windows are fixed and read by the store's clock (Redis TIME, or the memory store's clock).
import type { QuotaOutcome, QuotaUsage, TenantQuota, TokenQuotaCheck } from "../domain/quotas.js";

export interface TurnAdmission {
  tenant: string;
  /**
   * Who holds the slot: one turn of one session. Admitting the same holder again while its slot
   * lives is `admitted` with `readmitted` (expiry renewed, the turn not counted again), so a
   * retry after an unknown outcome never takes two slots or counts a turn twice.
   */
  holder: string;
  limits: TenantQuota;
  /** The slot's life unless renewed (one lease TTL: a dead holder's slot frees with its lease). */
  slotTtlMs: number;
}

export interface QuotaStore {
  /**
   * In one step: every limit is checked (a live slot per running turn against concurrent_turns,
   * this minute's turns, this minute's and today's tokens); all within → the slot is taken and
   * the turn counted; else refused with the first limit over and when it may free. Refused
   * changes nothing.
   */
  admitTurn(admission: TurnAdmission): Promise<QuotaOutcome>;
  /** Adds a model call's tokens to this minute's and today's counters. */
  countTokens(tenant: string, tokens: number): Promise<void>;
  /** Whether the token limits still have room (used < max), read in one step. */
  checkTokenQuota(tenant: string, limits: TenantQuota): Promise<TokenQuotaCheck>;
  /** Gives the slot back; false when it was not held (released or expired before). */
  releaseTurnSlot(tenant: string, holder: string): Promise<boolean>;
  /** Extends live slots by `ttlMs`; per holder, in order, false when its slot is gone. */
  renewTurnSlots(tenant: string, holders: readonly string[], ttlMs: number): Promise<boolean[]>;
  readQuotaUsage(tenant: string): Promise<QuotaUsage>;
}
