// Builds the configured RuntimeStore: the embedded memory store, or the Redis store on a
// standalone server or a cluster. The returned close() also quits the Redis connection, which
// the store itself never owns.
import type { IdempotencyKeyStore } from "../ports/idempotency-key-store.js";
import { createMemoryIdempotencyKeyStore } from "../store/memory/idempotency-key-ops.js";
import { createRedisIdempotencyKeyStore } from "../store/redis/idempotency-key-ops.js";
import type { RuntimeStore, StoreLimits } from "../ports/runtime-store.js";
import type { QuotaStore } from "../ports/quota-store.js";
import type { ScheduleStore } from "../ports/schedule-store.js";
import { createMemoryScheduleStore } from "../store/memory/schedule-ops.js";
import { createRedisScheduleStore } from "../store/redis/schedule-ops.js";
import { systemClock } from "../ports/clock.js";
import { createMemoryQuotaStore } from "../store/memory/quota-ops.js";
import { createRedisQuotaStore } from "../store/redis/quota-ops.js";
import type { StorageQuotaStore } from "../ports/storage-quota-store.js";
import { createMemoryStorageQuotaStore } from "../store/memory/storage-quota-ops.js";
import { createRedisStorageQuotaStore } from "../store/redis/storage-quota-ops.js";
import { createMemoryStore } from "../store/memory/memory-store.js";
import { createRedisStore, createRedisWebhookStore } from "../store/redis/index.js";
import type { WebhookStore } from "../ports/webhook-store.js";
import { createRedisEventLog } from "../store/redis/event-log.js";
import { createRedisSignals } from "../store/redis/signals.js";
import { createMemoryEventLog } from "../store/memory/event-log.js";
import { createMemorySignals } from "../store/memory/signals.js";
import type { EventLog } from "../ports/event-log.js";
import type { ReadyIndex } from "../ports/ready-index.js";
import type { SingletonGuard } from "../runtime/index.js";
import { createMemoryReadyIndex } from "../store/memory/ready-index.js";
import { createRedisReadyIndex } from "../store/redis/ready-index.js";
import { replicaConnectionOptions } from "../store/redis/connections.js";
import { createRedlockGuard } from "./sweep-guard.js";
import type { SessionSignals } from "../ports/session-signals.js";
import type { TenantBudgetStore } from "../ports/budget-guard.js";
import type { StoreConfig } from "./config.js";
import type { Logger } from "./logger.js";
import { connectRedis, describeRedis } from "./redis-connect.js";
import { adviseOnReplication } from "./redis-replication-advice.js";

/** Connections the Redis store opens besides the replica's own, on a standalone server. */
export const REDIS_EXTRA_CONNECTIONS = 1;

export interface BuiltStore {
  store: RuntimeStore;
  /** The session event log and turn signals on the same backend as the store. */
  log: EventLog;
  signals: SessionSignals;
  ready: ReadyIndex;
  /** Tenant quota counters (ADR 0015), shared by every replica on the same backend. */
  quotas: QuotaStore;
  /** Storage slots of sessions, agents and schedules per tenant (ADR 0029). */
  storageQuotas: StorageQuotaStore;
  /** Schedules (ADR 0020), shared by every replica on the same backend. */
  schedules: ScheduleStore;
  /** Webhook outboxes and endpoints (ADR 0021) on the same backend. */
  webhooks: WebhookStore;
  /** The front door's create Idempotency-Keys (ADR 0037), shared by every replica. */
  idempotencyKeys: IdempotencyKeyStore;
  /** Resolves when the backend answers; rejects while it is unreachable. */
  ping(): Promise<void>;
  /** False when Redis did not answer at start: the replica starts NOT_SERVING and keeps trying. */
  reachableAtStart: boolean;
  /** Tenant spend counters (ADR 0016), on the same backend as the store. */
  tenantSpend?: TenantBudgetStore;
  /** Guards the sweep so one replica runs it at a time (redlock on Redis). */
  sweepGuard: SingletonGuard | undefined;
  /** Closes the store, then its connection. */
  close(): Promise<void>;
}

/** `limits` follow from the server's request limits (storeLimitsFor); the defaults otherwise. */
export async function buildStore(
  config: StoreConfig,
  logger: Logger,
  limits?: StoreLimits,
): Promise<BuiltStore> {
  if (config.kind === "memory") {
    logger.info({ store: "memory" }, "using the in-memory store (state is lost on exit)");
    const store = createMemoryStore(limits && { limits });
    const log = createMemoryEventLog({ fences: store });
    // A turn's commit appends its turn_completed in the same step (ADR 0011).
    store.attachEventLog(log);
    const quotas = createMemoryQuotaStore({ clock: systemClock });
    // A commit's tenant charges reach the quota store in the commit's step (ADR 0038).
    store.attachQuotas(quotas);
    const signals = createMemorySignals();
    // Each new steer reaches the running turn's listener in its submit's step (ADR 0041).
    const steerNotice = signals.steerNotice?.();
    if (steerNotice) store.attachSteerNotices(steerNotice);
    return {
      store,
      tenantSpend: store,
      log,
      signals,
      ready: createMemoryReadyIndex(),
      quotas,
      storageQuotas: createMemoryStorageQuotaStore(),
      schedules: createMemoryScheduleStore({ clock: systemClock }),
      webhooks: store.webhooks,
      idempotencyKeys: createMemoryIdempotencyKeyStore(),
      ping: () => Promise.resolve(),
      reachableAtStart: true,
      sweepGuard: undefined,
      close: () => store.close(),
    };
  }
  const common = replicaConnectionOptions({
    password: config.password,
    commandTimeoutMs: config.commandTimeoutMs,
  });
  const redis = connectRedis(config, common);
  redis.on("error", (error: Error) => logger.warn({ err: error }, "redis connection error"));
  let reachableAtStart = true;
  try {
    await redis.ping();
  } catch (error) {
    // Redis refusing us (a wrong password, a missing ACL) will not heal by waiting; say so now.
    // Redis not answering may heal: start NOT_SERVING and let the health watch follow it.
    if (error instanceof Error && error.name === "ReplyError") {
      redis.disconnect();
      throw new Error(`Redis refused the connection: ${error.message}`, { cause: error });
    }
    reachableAtStart = false;
    logger.warn(
      { err: error },
      "Redis is unreachable at start: not serving until it answers (liveness stays SERVING)",
    );
  }
  logger.info(describeRedis(config), "using the Redis store");
  if (reachableAtStart) await adviseOnReplication(redis, config.durability, logger);
  const store = createRedisStore({
    redis,
    // A cluster client already has a connection per master; a standalone server gets a second
    // one so that one connection's pipeline is written while the other's runs (ADR 0004).
    extraConnections: config.clusterNodes.length > 0 ? 0 : REDIS_EXTRA_CONNECTIONS,
    durability: config.durability,
    ...(limits && { limits }),
  });
  const log = createRedisEventLog({ redis, durability: config.durability });
  const signals = createRedisSignals({ redis });
  // The submit's step publishes a new steer; this replica's own listener hears it at once.
  const steerNotice = signals.steerNotice?.();
  if (steerNotice) store.attachSteerNotices(steerNotice);
  return {
    store,
    tenantSpend: store,
    log,
    signals,
    ready: createRedisReadyIndex({ redis }),
    quotas: createRedisQuotaStore({ redis }),
    storageQuotas: createRedisStorageQuotaStore({ redis }),
    schedules: createRedisScheduleStore({ redis, durability: config.durability }),
    webhooks: createRedisWebhookStore({ redis, durability: config.durability }),
    idempotencyKeys: createRedisIdempotencyKeyStore({ redis, durability: config.durability }),
    async ping() {
      await redis.ping();
    },
    reachableAtStart,
    sweepGuard: createRedlockGuard(redis, "tether:sweeper"),
    async close() {
      await signals.close();
      await log.close();
      await store.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
