// The quota port on Redis: one script call per operation, all keys of a tenant in the slot of
// its hash tag `{quota:<tenant>}`, windows and slot expiry by the Redis clock (ADR 0015).
import type { Cluster, Redis } from "ioredis";
import { TetherError } from "../../domain/errors.js";
import type { QuotaLimitName, TenantQuota, TokenQuotaCheck } from "../../domain/quotas.js";
import { QUOTA_LIMIT_NAMES } from "../../domain/quotas.js";
import type { QuotaStore } from "../../ports/quota-store.js";
import { withChecks } from "../shared/checked.js";
import { quotaChecks } from "../shared/quota-checks.js";
import { checkNamespace, quotaKeys } from "./keys.js";
import { tagBacking } from "./backing.js";
import { REPLY } from "./replies.js";
import { createScriptRunner, type ScriptReply } from "./scripts.js";

const maxOf = (limits: TenantQuota, name: QuotaLimitName): number => limits[name]?.max ?? 0;

function limitName(value: unknown): QuotaLimitName {
  if (!(QUOTA_LIMIT_NAMES as readonly unknown[]).includes(value)) {
    throw new TetherError("internal", `a quota script named an unknown limit ${String(value)}`);
  }
  return value as QuotaLimitName;
}

function refusal(reply: ScriptReply): { limit: QuotaLimitName; retryAfterMs: number } {
  return { limit: limitName(reply[1]), retryAfterMs: Number(reply[2]) };
}

export function createRedisQuotaStore(options: {
  redis: Redis | Cluster;
  namespace?: string;
}): QuotaStore {
  const namespace = checkNamespace(options.namespace ?? "tether");
  const scripts = createScriptRunner(options.redis);
  const keys = (tenant: string) => quotaKeys(namespace, tenant);
  const store = withChecks<QuotaStore>(quotaChecks, {
    async admitTurn({ tenant, holder, limits, slotTtlMs: ttl }) {
      const k = keys(tenant);
      const reply = await scripts.run(
        "admitTurn",
        [k.slots, k.counters],
        [
          holder,
          ttl,
          maxOf(limits, "concurrent_turns"),
          maxOf(limits, "turns_per_minute"),
          maxOf(limits, "tokens_per_minute"),
          maxOf(limits, "tokens_per_day"),
        ],
      );
      if (reply[0] === REPLY.QUOTA_REFUSED) return { kind: "refused", ...refusal(reply) };
      return { kind: "admitted", readmitted: reply[1] === 1 };
    },

    async countTokens(tenant, tokens) {
      const k = keys(tenant);
      // The script keeps its first name; "charge" is a budget's word now (ADR 0036).
      await scripts.run("chargeTokens", [k.counters], [tokens]);
    },

    async checkTokenQuota(tenant, limits): Promise<TokenQuotaCheck> {
      const k = keys(tenant);
      const reply = await scripts.run(
        "checkTokenQuota",
        [k.counters],
        [maxOf(limits, "tokens_per_minute"), maxOf(limits, "tokens_per_day")],
      );
      if (reply[0] === REPLY.QUOTA_REFUSED) return { kind: "over", ...refusal(reply) };
      return { kind: "within" };
    },

    async releaseTurnSlot(tenant, holder) {
      const k = keys(tenant);
      const reply = await scripts.run("releaseTurnSlot", [k.slots], [holder]);
      return reply[1] === 1;
    },

    async renewTurnSlots(tenant, holders, ttl) {
      const k = keys(tenant);
      if (holders.length === 0) return [];
      const reply = await scripts.run("renewTurnSlots", [k.slots], [ttl, ...holders]);
      return holders.map((_, i) => reply[i + 1] === 1);
    },

    async readQuotaUsage(tenant) {
      const k = keys(tenant);
      const reply = await scripts.run("readQuotaUsage", [k.slots, k.counters], []);
      const n = (i: number) => Number(reply[i]);
      return {
        runningTurns: n(1),
        turnsThisMinute: n(2),
        tokensThisMinute: n(3),
        tokensToday: n(4),
        minuteResetAtMs: n(5),
        dayResetAtMs: n(6),
        nowMs: n(7),
      };
    },
  });
  // A commit on the same connection and namespace may release and charge in its step (ADR 0038).
  return tagBacking(store, options.redis, namespace);
}
