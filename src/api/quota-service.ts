// QuotaService: GetQuotaUsage, the caller's tenant's quota limits with their use now (ADR 0015),
// and the submission gate: StreamTurn, SubmitInput and EnqueueWork are refused with
// RESOURCE_EXHAUSTED while one of the tenant's reject-mode limits is used up. Streams have their
// own gate (stream-quota.ts); their count is reported here.
import type { Interceptor, ServiceImpl } from "@connectrpc/connect";
import { permissionDenied } from "../domain/errors.js";
import {
  exhaustedLimit,
  quotaExhausted,
  quotaOf,
  quotaReport,
  type QuotaConfig,
  type QuotaLimitName,
  type QuotaMode as DomainQuotaMode,
  type TenantQuota,
} from "../domain/quotas.js";
import { QuotaLimitKind, QuotaMode, type QuotaService } from "../gen/tether/v1/quota_service_pb.js";
import type { QuotaStore } from "../ports/quota-store.js";
import type { StreamGate } from "./stream-quota.js";
import { tenantKey } from "./tenancy.js";
import type { StorageLimitName, StorageUsage } from "../domain/storage-quotas.js";

export interface QuotaServiceOptions {
  /** Undefined where the server keeps no quota counters: every tenant then has no limits. */
  store: QuotaStore | undefined;
  config: QuotaConfig;
  /** The tenant's storage limits with their use (ADR 0029), appended to GetQuotaUsage's. */
  storageUsage?: (tenant: string) => Promise<StorageUsage[]>;
  /** Hears each submission the gate refuses (for the refusal metric). */
  onRefusal?: (tenant: string, limit: QuotaLimitName) => void;
  /** The replica's count of open streams (ADR 0028); without it streams are not limited. */
  streams?: StreamGate | undefined;
}

/** Counters of a tenant with no store-kept limits: only the stream count is reported. */
const NO_STORED_USE = {
  runningTurns: 0,
  turnsThisMinute: 0,
  tokensThisMinute: 0,
  tokensToday: 0,
  minuteResetAtMs: 0,
  dayResetAtMs: 0,
  nowMs: 0,
};

const KIND: Record<QuotaLimitName, QuotaLimitKind> = {
  concurrent_turns: QuotaLimitKind.CONCURRENT_TURNS,
  turns_per_minute: QuotaLimitKind.TURNS_PER_MINUTE,
  tokens_per_minute: QuotaLimitKind.TOKENS_PER_MINUTE,
  tokens_per_day: QuotaLimitKind.TOKENS_PER_DAY,
  concurrent_streams: QuotaLimitKind.CONCURRENT_STREAMS,
};
const STORAGE_KIND: Record<StorageLimitName, QuotaLimitKind> = {
  sessions: QuotaLimitKind.SESSIONS,
  agents: QuotaLimitKind.AGENTS,
  schedules: QuotaLimitKind.SCHEDULES,
  webhook_endpoints: QuotaLimitKind.WEBHOOK_ENDPOINTS,
  session_metadata_bytes: QuotaLimitKind.SESSION_METADATA_BYTES,
  metadata_history_bytes: QuotaLimitKind.METADATA_HISTORY_BYTES,
};
const MODE: Record<DomainQuotaMode, QuotaMode> = {
  queue: QuotaMode.QUEUE,
  reject: QuotaMode.REJECT,
};

export function createQuotaService(options: QuotaServiceOptions): ServiceImpl<typeof QuotaService> {
  return {
    async getQuotaUsage(req, ctx) {
      const own = ctx.values.get(tenantKey);
      if (req.tenant !== "" && req.tenant !== own) {
        throw permissionDenied("tenant", "a caller reads its own tenant's quota only");
      }
      const { store, streams } = options;
      const configured = store ? quotaOf(options.config, own) : undefined;
      const quota: TenantQuota = {
        ...configured,
        ...(streams ? { concurrent_streams: streams.limitOf(own) } : {}),
      };
      if (!streams) delete quota.concurrent_streams;
      const [stored, storage] = await Promise.all([
        store && configured ? store.readQuotaUsage(own) : NO_STORED_USE,
        options.storageUsage?.(own) ?? [],
      ]);
      const usage = { ...stored, openStreams: streams?.open(own) ?? 0 };
      const turns = Object.keys(quota).length === 0 ? [] : quotaReport(quota, usage);
      return {
        tenant: own,
        limits: [
          ...turns.map((r) => ({
            kind: KIND[r.limit],
            mode: MODE[r.mode],
            limit: BigInt(r.max),
            used: BigInt(r.used),
            resetTimeUnixMs: BigInt(r.resetAtMs ?? 0),
          })),
          ...storage.map((r) => ({
            kind: STORAGE_KIND[r.limit],
            mode: QuotaMode.REJECT,
            limit: BigInt(r.max),
            used: BigInt(r.used),
            resetTimeUnixMs: 0n,
          })),
        ],
      };
    },
  };
}

/** The RPCs that submit work for a turn: refused while a reject-mode limit is used up. */
const SUBMISSIONS = new Set([
  "tether.v1.TurnService/StreamTurn",
  "tether.v1.QueueService/SubmitInput",
  "tether.v1.QueueService/EnqueueWork",
]);

/**
 * The submission gate. It reads the counters (one script call) and is a courtesy, not the
 * guarantee: the store's admission of each turn is the atomic check, and an input accepted here
 * waits there when the limit was reached meanwhile.
 */
export function createQuotaInterceptor(options: QuotaServiceOptions): Interceptor {
  return (next) => async (req) => {
    if (!options.store || !SUBMISSIONS.has(`${req.service.typeName}/${req.method.name}`))
      return next(req);
    await refuseExhaustedSubmission(options, req.contextValues.get(tenantKey));
    return next(req);
  };
}

/**
 * Throws quota_exhausted (with the wait until the limit frees) while one of the tenant's
 * reject-mode limits is used up. The gRPC submissions and the front door's inputs (ADR 0037) both
 * pass here.
 */
export async function refuseExhaustedSubmission(
  options: Pick<QuotaServiceOptions, "store" | "config" | "onRefusal">,
  tenant: string,
): Promise<void> {
  const quota = options.store && quotaOf(options.config, tenant);
  if (!options.store || !quota) return;
  const over = exhaustedLimit(quota, await options.store.readQuotaUsage(tenant), "reject");
  if (over) {
    options.onRefusal?.(tenant, over.limit);
    throw quotaExhausted(tenant, over.limit, over.retryAfterMs, quota[over.limit]?.max ?? 0);
  }
}
