// What every operation module of the Redis store shares: the script runner, key builders,
// limits, the liveness probe, the decision log and the session index updates.
import type { Cluster, Redis } from "ioredis";
import type { SessionId } from "../../domain/ids.js";
import type { LivenessProbe } from "../../ports/liveness-probe.js";
import type { StoreLimits } from "../../ports/runtime-store.js";
import type { StoreLogger } from "../shared/store-log.js";
import type { SteerNotice } from "../../ports/session-signals.js";
import {
  agentIndexKey,
  agentKeys,
  outboxIndexKey,
  readyIndexKey,
  tenantSpendKey,
  quotaKeys,
  type QuotaKeys,
  sessionIndexKey,
  sessionEventKeys,
  sessionKeys,
  type AgentKeys,
  type SessionEventKeys,
  type SessionKeys,
  webhookTenantKeys,
} from "./keys.js";
import type { ScriptRunner } from "./scripts.js";

/** Entries a session's event log keeps by default (event-log.ts trims to it too). */
export const DEFAULT_LOG_MAX_ENTRIES = 10_000;

export interface RedisContext {
  redis: Redis | Cluster;
  scripts: ScriptRunner;
  limits: StoreLimits;
  probe: LivenessProbe;
  /** Decision records (lease claims, refusals); undefined when nobody listens. */
  log: StoreLogger | undefined;
  keys(sessionId: SessionId): SessionKeys;
  /** The session's event log, for a commit that appends its turn's announcement (ADR 0011). */
  eventKeys(sessionId: SessionId): SessionEventKeys;
  /** Who a new steer is told to once its submit replied (ADR 0041); one holder for every lane. */
  steers: { notice?: SteerNotice };
  /** The log's retained length, as the event log trims it. */
  logMaxEntries: number;
  indexKey: string;
  /**
   * The ready index (ready-index.ts) where it shares the server with every session's keys (a
   * standalone Redis): the turn start marks a session in its step and an idle release clears
   * it in its own (ADR 0024). Undefined on Cluster, where it is its own command.
   */
  readyKey: string | undefined;
  /**
   * The due-outbox hint and the tenant's endpoints version, the keys a commit folds its webhook
   * work into (ADR 0021 "Folded into the commit"), where they share the server with the
   * session's keys (standalone, Sentinel). Undefined on Cluster: separate steps there.
   */
  outboxFoldKeys: ((tenant: string) => [string, string]) | undefined;
  agentKeys(agentId: string): AgentKeys;
  agentIndexKey: string;
  tenantSpendKey(tenant: string): string;
  /** A tenant's quota keys (the quota store's, on the same namespace: ADR 0038). */
  quotaKeys(tenant: string): QuotaKeys;
  /**
   * Adds a session to the index hint with the next index update (unawaited). `repair`: a commit
   * of a session that exists already, skipped when this store added it and the update did not
   * fail (the entry is there unless a delete took it, and a session created again is noted).
   */
  noteSession(sessionId: SessionId, repair?: boolean): void;
  /** Sends the pending index update now, so a command sent after it sees it. */
  flushIndex(): void;
}

/** Sessions a store remembers having added to the index (the oldest is forgotten first). */
const NOTED_SESSIONS = 10_000;

export function createRedisContext(
  redis: Redis | Cluster,
  scripts: ScriptRunner,
  namespace: string,
  limits: StoreLimits,
  probe: LivenessProbe,
  log: StoreLogger | undefined,
  logMaxEntries = DEFAULT_LOG_MAX_ENTRIES,
): RedisContext {
  const indexKey = sessionIndexKey(namespace);
  const isCluster = "isCluster" in redis && redis.isCluster;
  // Commits landing in one turn of the event loop share one ZADD: the index is a hint, and one
  // command per turn instead of one per commit is a command less on most turn cycles.
  let pending: (string | number)[] = [];
  // Sessions this store added to the index, so a commit's repair of its entry costs no command
  // each turn (ADR 0023); a failed update forgets its members, so their next commit repairs.
  const noted = new Set<SessionId>();
  const flushIndex = (): void => {
    if (pending.length === 0) return;
    const members = pending;
    pending = [];
    redis.zadd(indexKey, ...members).catch(() => {
      for (let i = 1; i < members.length; i += 2) noted.delete(members[i] as SessionId);
    });
  };
  return {
    redis,
    scripts,
    limits,
    probe,
    log,
    keys: (sessionId) => sessionKeys(namespace, sessionId),
    eventKeys: (sessionId) => sessionEventKeys(namespace, sessionId),
    steers: {},
    logMaxEntries,
    indexKey,
    readyKey: isCluster ? undefined : readyIndexKey(namespace),
    outboxFoldKeys: isCluster
      ? undefined
      : (tenant) => [
          outboxIndexKey(namespace),
          webhookTenantKeys(namespace, tenant).endpointsVersion,
        ],
    agentKeys: (agentId) => agentKeys(namespace, agentId),
    agentIndexKey: agentIndexKey(namespace),
    tenantSpendKey: (tenant) => tenantSpendKey(namespace, tenant),
    quotaKeys: (tenant) => quotaKeys(namespace, tenant),
    noteSession(sessionId, repair = false) {
      if (repair && noted.has(sessionId)) return;
      noted.add(sessionId);
      if (noted.size > NOTED_SESSIONS) noted.delete(noted.values().next().value as SessionId);
      if (pending.length === 0) setImmediate(flushIndex);
      pending.push(0, sessionId);
    },
    flushIndex,
  };
}

/** A script's keys, with the ready index last where the script keeps it in its step (ADR 0024). */
export function withReadyKey(ctx: RedisContext, keys: string[]): string[] {
  return ctx.readyKey === undefined ? keys : [...keys, ctx.readyKey];
}
