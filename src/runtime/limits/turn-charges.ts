// What one turn owes its tenant's limits (ADR 0038): its quota slot, the tokens of its model
// calls (ADR 0015) and their cost (ADR 0016). Where the store's commit step reaches the tenant's
// counters (RuntimeStore.chargesInCommit: standalone Redis, Sentinel, memory), the last call's
// charges are held and ride in the commit with the slot's release; a later call first flushes
// what is held with the separate steps (its checks must see it), and a turn that ends without a
// commit that carried them (refused, failed, parked, handed over) flushes them the separate way.
// Elsewhere (Cluster: the tenant's keys sit in another slot; the wire) every charge and the
// release are their own steps at once, as before.
import type { SessionId } from "../../domain/ids.js";
import { tenantOfSession } from "../../domain/quotas.js";
import type { TenantCommitCharges } from "../../domain/tenant-charges.js";
import type { TenantBudgetStore } from "../../ports/budget-guard.js";
import type { QuotaStore } from "../../ports/quota-store.js";
import type { RuntimeStore } from "../../ports/runtime-store.js";

export interface TurnChargesInput {
  sessionId: SessionId;
  /** The turn's store: its commit may carry the charges (absent: every charge is its own step). */
  store?: Pick<RuntimeStore, "chargesInCommit">;
  quotas?: QuotaStore | undefined;
  spend?: TenantBudgetStore | undefined;
  logger: { warn(fields: object, message: string): void };
}

export interface TurnCharges {
  /** True when the commit carries the charges and the release (the store said so). */
  readonly inCommit: boolean;
  /** The admitted turn's slot: released by the commit that carries it, else by releaseSlot. */
  holdSlot(holder: string): void;
  /** A model call's tokens, charged to the tenant's quota counters. */
  chargeTokens(tokens: number): Promise<void>;
  /** Held tokens charged now (before the next call's token check reads the counters). */
  flushTokens(): Promise<void>;
  /** A model call's cost, charged to the tenant's spend in `window`. */
  chargeSpend(window: string, costMicros: number): Promise<void>;
  /**
   * The tenant's spend in `window` with the held cost charged first: one step either way (a
   * charge answers the total, a charge of 0 only reads).
   */
  readSpend(window: string): Promise<number>;
  /**
   * The tenant's spend the turn start's step read (ADR 0038): the next readSpend of that window
   * answers it without a step of its own, once, while nothing is held.
   */
  primeSpend(read: { window: string; spent: number } | undefined): void;
  /** What the turn's commit carries now; undefined when it carries nothing. */
  forCommit(): TenantCommitCharges | undefined;
  /** The commit that carried forCommit()'s charges applied: they and the slot are settled. */
  committed(): void;
  /** After the turn: held charges go with the separate steps (none after a carrying commit). */
  settle(): Promise<void>;
  /** Gives the slot back with its own step, unless the commit released it. */
  releaseSlot(): Promise<void>;
}

export function createTurnCharges(input: TurnChargesInput): TurnCharges {
  const { sessionId, quotas, spend: spendStore, logger } = input;
  const tenant = tenantOfSession(sessionId);
  const inCommit =
    input.store?.chargesInCommit?.({
      ...(quotas && { quotas }),
      ...(spendStore && { spend: spendStore }),
    }) === true;
  let slot: string | undefined;
  let slotReleased = false;
  let tokens = 0;
  let spend: { window: string; costMicros: number } | undefined;
  let primed: { window: string; spent: number } | undefined;

  const warn = (fields: object, message: string): void =>
    logger.warn({ sessionId, tenant, ...fields }, message);

  async function flushTokens(): Promise<void> {
    if (tokens === 0 || !quotas) return;
    const held = tokens;
    tokens = 0;
    // The call happened; a charge lost to an outage undercounts, it never fails the turn.
    await quotas.countTokens(tenant, held).catch((error: unknown) => {
      warn({ error }, "quota tokens not charged");
    });
  }

  async function chargeSpendNow(window: string, costMicros: number): Promise<number> {
    if (!spendStore) return 0;
    return spendStore.chargeTenantSpend({ tenant, window, costMicros });
  }

  async function flushSpend(): Promise<void> {
    if (!spend) return;
    const held = spend;
    spend = undefined;
    await chargeSpendNow(held.window, held.costMicros).catch((error: unknown) => {
      warn({ charge: held.costMicros, error }, "tenant spend not charged");
    });
  }

  return {
    inCommit,
    holdSlot(holder) {
      slot = holder;
    },
    async chargeTokens(added) {
      if (added <= 0) return;
      tokens += added;
      if (!inCommit) await flushTokens();
    },
    flushTokens,
    async chargeSpend(window, costMicros) {
      if (costMicros <= 0) return;
      // A held charge of another window (the day turned) goes first, to its own window.
      if (spend && spend.window !== window) await flushSpend();
      spend = { window, costMicros: (spend?.costMicros ?? 0) + costMicros };
      if (!inCommit) await flushSpend();
    },
    primeSpend(read) {
      primed = read;
    },
    async readSpend(window) {
      const read = primed;
      primed = undefined;
      if (read && read.window === window && !spend) return read.spent;
      if (spend && spend.window !== window) await flushSpend();
      const held = spend?.costMicros ?? 0;
      spend = undefined;
      // Rejects like the read it replaces: the guard decides what an unreadable counter means.
      return chargeSpendNow(window, held).catch((error: unknown) => {
        if (held > 0) warn({ charge: held, error }, "tenant spend not charged");
        throw error;
      });
    },
    forCommit() {
      if (!inCommit) return undefined;
      const releaseSlot = slot !== undefined && !slotReleased ? slot : undefined;
      if (releaseSlot === undefined && tokens === 0 && !spend) return undefined;
      return {
        tenant,
        ...(releaseSlot !== undefined && { releaseSlot }),
        ...(tokens > 0 && { quotaTokens: tokens }),
        ...(spend && { spend: { ...spend } }),
      };
    },
    committed() {
      tokens = 0;
      spend = undefined;
      if (slot !== undefined) slotReleased = true;
    },
    async settle() {
      await Promise.all([flushTokens(), flushSpend()]);
    },
    async releaseSlot() {
      if (slot === undefined || slotReleased || !quotas) return;
      slotReleased = true;
      const holder = slot;
      // A slot not given back here frees at its expiry (one lease TTL).
      await quotas.releaseTurnSlot(tenant, holder).catch((error: unknown) => {
        warn({ holder, error }, "quota slot not released");
      });
    },
  };
}
