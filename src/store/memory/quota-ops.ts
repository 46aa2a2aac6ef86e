// The quota port in memory: one process's tenants, on the injected clock. Every operation runs
// to completion without awaiting, so each is one atomic step as the Redis scripts are.
import {
  DAY_MS,
  MINUTE_MS,
  type QuotaLimitName,
  type QuotaUsage,
  type TenantQuota,
  type TokenQuotaCheck,
} from "../../domain/quotas.js";
import type { Clock } from "../../ports/clock.js";
import type { QuotaStore, TurnAdmission } from "../../ports/quota-store.js";
import { withChecks } from "../shared/checked.js";
import { quotaChecks } from "../shared/quota-checks.js";

interface TenantCounters {
  /** holder -> slot expiry (epoch ms) */
  slots: Map<string, number>;
  turnWindow: number;
  turns: number;
  tokenMinuteWindow: number;
  tokensMinute: number;
  dayWindow: number;
  tokensDay: number;
}

const fresh = (): TenantCounters => ({
  slots: new Map(),
  turnWindow: -1,
  turns: 0,
  tokenMinuteWindow: -1,
  tokensMinute: 0,
  dayWindow: -1,
  tokensDay: 0,
});

export function createMemoryQuotaStore(options: { clock: Clock }): QuotaStore {
  const tenants = new Map<string, TenantCounters>();
  const of = (tenant: string): TenantCounters => {
    let t = tenants.get(tenant);
    if (!t) {
      t = fresh();
      tenants.set(tenant, t);
    }
    return t;
  };

  /** Counters as of `now`: a count from an earlier window reads 0. */
  function usageAt(t: TenantCounters, now: number): QuotaUsage {
    const minute = Math.floor(now / MINUTE_MS);
    const day = Math.floor(now / DAY_MS);
    let running = 0;
    for (const expiry of t.slots.values()) if (expiry > now) running++;
    return {
      runningTurns: running,
      turnsThisMinute: t.turnWindow === minute ? t.turns : 0,
      tokensThisMinute: t.tokenMinuteWindow === minute ? t.tokensMinute : 0,
      tokensToday: t.dayWindow === day ? t.tokensDay : 0,
      minuteResetAtMs: (minute + 1) * MINUTE_MS,
      dayResetAtMs: (day + 1) * DAY_MS,
      nowMs: now,
    };
  }

  function tokensOver(limits: TenantQuota, u: QuotaUsage): TokenQuotaCheck {
    const minute = limits.tokens_per_minute;
    if (minute && u.tokensThisMinute >= minute.max) {
      return {
        kind: "over",
        limit: "tokens_per_minute",
        retryAfterMs: u.minuteResetAtMs - u.nowMs,
      };
    }
    const day = limits.tokens_per_day;
    if (day && u.tokensToday >= day.max) {
      return { kind: "over", limit: "tokens_per_day", retryAfterMs: u.dayResetAtMs - u.nowMs };
    }
    return { kind: "within" };
  }

  function earliestExpiry(t: TenantCounters, now: number): number {
    let first = Infinity;
    for (const expiry of t.slots.values()) if (expiry > now && expiry < first) first = expiry;
    return first - now;
  }

  /** admitTurn's checks, reading only (the turn start's step runs them before its lease). */
  function checkAdmission(admission: TurnAdmission): AdmissionVerdict {
    const { tenant, holder, limits } = admission;
    const now = options.clock.nowMs();
    const t = of(tenant);
    const own = t.slots.get(holder);
    if (own !== undefined && own > now) return { kind: "readmitted" };
    const u = usageAt(t, now);
    const refuse = (limit: QuotaLimitName, retryAfterMs: number) => ({
      kind: "refused" as const,
      limit,
      retryAfterMs: Math.max(1, retryAfterMs),
    });
    const slots = limits.concurrent_turns;
    if (slots && u.runningTurns >= slots.max) {
      return refuse("concurrent_turns", earliestExpiry(t, now));
    }
    const turns = limits.turns_per_minute;
    if (turns && u.turnsThisMinute >= turns.max) {
      return refuse("turns_per_minute", u.minuteResetAtMs - now);
    }
    const tokens = tokensOver(limits, u);
    if (tokens.kind === "over") return refuse(tokens.limit, tokens.retryAfterMs);
    return { kind: "admitted" };
  }

  /** admitTurn's writes once checkAdmission allowed them (nothing ran in between). */
  function takeSlot(admission: TurnAdmission, verdict: "admitted" | "readmitted"): void {
    const { tenant, holder, slotTtlMs: ttl } = admission;
    const now = options.clock.nowMs();
    const t = of(tenant);
    if (verdict === "admitted") {
      const u = usageAt(t, now);
      for (const [h, expiry] of t.slots) if (expiry <= now) t.slots.delete(h);
      t.turnWindow = Math.floor(now / MINUTE_MS);
      t.turns = u.turnsThisMinute + 1;
    }
    t.slots.set(holder, now + ttl);
  }

  const store = withChecks<QuotaStore>(quotaChecks, {
    async admitTurn(admission) {
      const verdict = checkAdmission(admission);
      if (verdict.kind === "refused") return verdict;
      takeSlot(admission, verdict.kind);
      return { kind: "admitted", readmitted: verdict.kind === "readmitted" };
    },

    async countTokens(tenant, tokens) {
      const now = options.clock.nowMs();
      const t = of(tenant);
      const u = usageAt(t, now);
      t.tokenMinuteWindow = Math.floor(now / MINUTE_MS);
      t.tokensMinute = u.tokensThisMinute + tokens;
      t.dayWindow = Math.floor(now / DAY_MS);
      t.tokensDay = u.tokensToday + tokens;
    },

    async checkTokenQuota(tenant, limits) {
      return tokensOver(limits, usageAt(of(tenant), options.clock.nowMs()));
    },

    async releaseTurnSlot(tenant, holder) {
      const t = of(tenant);
      const expiry = t.slots.get(holder);
      t.slots.delete(holder);
      return expiry !== undefined && expiry > options.clock.nowMs();
    },

    async renewTurnSlots(tenant, holders, ttl) {
      const t = of(tenant);
      const now = options.clock.nowMs();
      return holders.map((holder) => {
        const expiry = t.slots.get(holder);
        if (expiry === undefined || expiry <= now) return false;
        t.slots.set(holder, now + ttl);
        return true;
      });
    },

    async readQuotaUsage(tenant) {
      return usageAt(of(tenant), options.clock.nowMs());
    },
  });
  admissionSteps.set(store, { check: checkAdmission, take: takeSlot });
  return store;
}

/** A quota admission's verdict before its writes (the turn start's step, ADR 0038). */
export type AdmissionVerdict =
  | { kind: "admitted" | "readmitted" }
  | { kind: "refused"; limit: QuotaLimitName; retryAfterMs: number };

/** The admission's check and writes, apart, for a memory store's turn start to run in its step. */
export interface AdmissionSteps {
  check(admission: TurnAdmission): AdmissionVerdict;
  take(admission: TurnAdmission, verdict: "admitted" | "readmitted"): void;
}

const admissionSteps = new WeakMap<QuotaStore, AdmissionSteps>();

/** The steps of a memory quota store (undefined for any other). */
export const admissionStepsOf = (store: QuotaStore): AdmissionSteps | undefined =>
  admissionSteps.get(store);
