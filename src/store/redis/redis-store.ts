// The Redis store: the RuntimeStore port on ioredis, one Lua script per atomic operation.
// Works on a standalone Redis and on Redis Cluster (every script stays in one session's slot).
import type { Cluster, Redis } from "ioredis";
import type { LivenessProbe } from "../../ports/liveness-probe.js";
import {
  DEFAULT_STORE_LIMITS,
  type RuntimeStore,
  type StoreLimits,
} from "../../ports/runtime-store.js";
import { withChecks } from "../shared/checked.js";
import { runtimeChecks } from "../shared/runtime-checks.js";
import { createProcLivenessProbe } from "../shared/local-process.js";
import type { StoreLogger } from "../shared/store-log.js";
import type { SteerNotice } from "../../ports/session-signals.js";
import * as commits from "./commit-ops.js";
import { reachesInStep, tagBacking } from "./backing.js";
import { createRedisContext } from "./context.js";
import * as history from "./history-ops.js";
import * as inputs from "./input-ops.js";
import * as turnStart from "./turn-start-ops.js";
import { checkNamespace } from "./keys.js";
import * as leases from "./lease-ops.js";
import * as agents from "./agent-ops.js";
import * as parking from "./parked-turn-ops.js";
import * as queue from "./queue-ops.js";
import { duplicateConnection } from "./connections.js";
import { ASYNC_DURABILITY, withDurability, type RedisDurability } from "./durability.js";
import { createScriptRunner } from "./scripts.js";
import * as sessions from "./session-ops.js";
import * as toolCalls from "./tool-call-ops.js";
import * as turnRecords from "./turn-record-ops.js";
import { chargeTenantSpend } from "./tenant-budget-ops.js";
import { budgetChecks } from "../shared/budget-checks.js";
import type { TenantBudgetStore } from "../../ports/budget-guard.js";

export interface RedisStoreOptions {
  /** A connection the caller owns: the store defines its scripts on it but never closes it. */
  redis: Redis | Cluster;
  /** Key prefix; several stores may share one Redis under different namespaces. */
  namespace?: string;
  limits?: Partial<StoreLimits>;
  livenessProbe?: LivenessProbe;
  /** Decision records: lease claims, reclaims, renewal and fencing refusals. None by default. */
  logger?: StoreLogger;
  /**
   * Extra connections the store opens (duplicates of `redis`, closed by `close`) to spread its
   * script calls over, by session. ioredis keeps one pipeline in flight per connection, so on
   * one connection Node and Redis take turns; with more, one connection's batch is written
   * while another's runs. 0 by default: everything on `redis`. ADR 0004.
   */
  extraConnections?: number;
  /** `async` by default; `replicated` puts WAIT behind every acknowledging script (ADR 0017). */
  durability?: RedisDurability;
  /** The event log's retained length, for a commit's announcement (as the log's maxEntries). */
  logMaxEntries?: number;
}

/** FNV-1a over the id's UTF-16 units: cheap, and stable for a session, so its calls keep order. */
function laneOf(sessionId: unknown, lanes: number): number {
  const text = typeof sessionId === "string" ? sessionId : "";
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % lanes;
}

/** The Redis store: the runtime store and spend port, and where its submit tells of steers. */
export type RedisStore = RuntimeStore &
  TenantBudgetStore & {
    /**
     * The signals' notice a new steer reaches once its submit's step replied (ADR 0041): the
     * step published it for other replicas, this one's listener hears it at once.
     */
    attachSteerNotices(notice: SteerNotice): void;
  };

export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const namespace = checkNamespace(options.namespace ?? "tether");
  const limits: StoreLimits = { ...DEFAULT_STORE_LIMITS, ...options.limits };
  const probe = options.livenessProbe ?? createProcLivenessProbe();
  const durability = options.durability ?? ASYNC_DURABILITY;
  const runnerOn = (conn: Redis | Cluster) => withDurability(createScriptRunner(conn), durability);
  const ctx = createRedisContext(
    options.redis,
    runnerOn(options.redis),
    namespace,
    limits,
    probe,
    options.logger,
    options.logMaxEntries,
  );
  const owned = Array.from({ length: options.extraConnections ?? 0 }, () =>
    duplicateConnection(options.redis),
  );
  // Each lane runs scripts on its own connection; the session index (ctx.redis) stays on the
  // caller's connection for every lane, so its updates keep their order against list and delete.
  const lanes = [ctx, ...owned.map((conn) => ({ ...ctx, scripts: runnerOn(conn) }))];
  const on = (sessionId: unknown) =>
    lanes.length === 1 ? ctx : (lanes[laneOf(sessionId, lanes.length)] ?? ctx);
  const store = withChecks<RuntimeStore & TenantBudgetStore, RedisStore>(
    { ...runtimeChecks(limits), ...budgetChecks },
    {
      attachSteerNotices(notice) {
        // Shared by every lane (each lane's context is a copy of ctx's fields).
        ctx.steers.notice = notice;
      },
      commit: (c) => commits.commit(on(c?.sessionId), c),
      loadSession: (id, since) => commits.loadSession(on(id), id, since),
      deleteSession: (id) => sessions.deleteSession(on(id), id),
      listSessions: (o) => sessions.listSessions(ctx, o),
      readSessionSummaries: (ids) => sessions.readSessionSummaries(on, ids),
      tryClaimLease: (id, owner, ttl) => leases.tryClaimLease(on(id), id, owner, ttl),
      renewLease: (fence, ttl) => leases.renewLease(on(fence?.sessionId), fence, ttl),
      renewLeases: (fences, ttl) => leases.renewLeases(ctx, fences, ttl),
      releaseLease: (fence) => leases.releaseLease(on(fence?.sessionId), fence),
      releaseIfIdle: (fence) => leases.releaseIfIdle(on(fence?.sessionId), fence),
      reclaimLease: (id, claimant, observed, ttl) =>
        leases.reclaimLease(on(id), id, claimant, observed, ttl),
      currentLease: (id) => leases.currentLease(on(id), id),
      enqueueWork: (draft) => queue.enqueueWork(on(draft?.sessionId), draft),
      listWork: (id) => queue.listWork(on(id), id),
      cancelWork: (id, ids) => queue.cancelWork(on(id), id, ids),
      claimReadyWork: (fence, boundary, max) =>
        queue.claimReadyWork(on(fence?.sessionId), fence, boundary, max),
      claimWorkByIds: (fence, ids) => queue.claimWorkByIds(on(fence?.sessionId), fence, ids),
      submitInput: (draft) => inputs.submitInput(on(draft?.sessionId), draft),
      startTurn: (draft, claim) => turnStart.startTurn(on(draft?.sessionId), draft, claim),
      keepsReadyIndex: ctx.readyKey !== undefined,
      foldsOutbox: ctx.outboxFoldKeys !== undefined,
      // The events stream and its counter are in the session's slot: on every topology.
      announcesInCommit: () => true,
      chargesInCommit: (ports) => reachesInStep(options.redis, namespace, ports),
      listInputs: (id) => inputs.listInputs(on(id), id),
      cancelInputs: (id, selector) => inputs.cancelInputs(on(id), id, selector),
      claimInputs: (fence, point, max) =>
        inputs.claimInputs(on(fence?.sessionId), fence, point, max),
      deferActiveInputs: (fence, turnId) =>
        inputs.deferActiveInputs(on(fence?.sessionId), fence, turnId),
      recordToolCalls: (fence, turnId, waits) =>
        toolCalls.recordToolCalls(on(fence?.sessionId), fence, turnId, waits),
      answerToolCalls: (id, turnId, answers) =>
        toolCalls.answerToolCalls(on(id), id, turnId, answers),
      decideApprovals: (id, turnId, decisions) =>
        toolCalls.decideApprovals(on(id), id, turnId, decisions),
      closeToolCalls: (fence, turnId, waits) =>
        toolCalls.closeToolCalls(on(fence?.sessionId), fence, turnId, waits),
      readToolCalls: (id, turnId) => toolCalls.readToolCalls(on(id), id, turnId),
      parkTurn: (fence, draft) => parking.parkTurn(on(fence?.sessionId), fence, draft),
      resumeTurn: (fence, turnId) => parking.resumeTurn(on(fence?.sessionId), fence, turnId),
      cancelParkedTurn: (id, turnId) => parking.cancelParkedTurn(on(id), id, turnId),
      readParkedTurn: (id) => parking.readParkedTurn(on(id), id),
      readTurns: (id, query) => turnRecords.readTurns(on(id), id, query),
      readTurn: (id, turnId) => turnRecords.readTurn(on(id), id, turnId),
      createAgent: (draft) => agents.createAgent(ctx, draft),
      updateAgent: (update) => agents.updateAgent(ctx, update),
      getAgent: (id, version) => agents.getAgent(ctx, id, version),
      listAgents: (o) => agents.listAgents(ctx, o),
      deleteAgent: (id) => agents.deleteAgent(ctx, id),
      readRevision: (id, revision) => history.readRevision(on(id), id, revision),
      forkSession: (draft) => history.forkSession(on(draft?.targetId), on(draft?.sourceId), draft),
      rewindSession: (draft) => history.rewindSession(on(draft?.sessionId), draft),
      vacuum: (id) => sessions.vacuum(on(id), id),
      chargeTenantSpend: (charge) => chargeTenantSpend(ctx, charge),
      // The caller's connection stays open (it may serve other stores or other code; the caller
      // quits it after closing the store); the extra connections are the store's own.
      close: async () => {
        await Promise.all(owned.map((conn) => conn.quit().catch(() => conn.disconnect())));
      },
    },
  );
  // The store is its own tenant spend port: its commits may charge it (ADR 0038).
  return tagBacking(store, options.redis, namespace);
}
