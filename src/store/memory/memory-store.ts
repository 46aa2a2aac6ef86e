// The in-memory reference store: the embedded default and the oracle of the conformance suite.
// Each operation is one serialized step per session (see keyed-mutex.ts).
import type { QuotaStore } from "../../ports/quota-store.js";
import type { AnnouncementLog, FenceAuthority } from "./event-log.js";
import { requireLiveFence } from "./session-cell.js";
import { isTetherError } from "../../domain/errors.js";
import type { LeaseFence } from "../../domain/lease.js";
import { systemClock, type Clock } from "../../ports/clock.js";
import type { LivenessProbe } from "../../ports/liveness-probe.js";
import {
  DEFAULT_STORE_LIMITS,
  type RuntimeStore,
  type StoreLimits,
} from "../../ports/runtime-store.js";
import { createProcLivenessProbe } from "../shared/local-process.js";
import { logFenceRefused, type StoreLogger } from "../shared/store-log.js";
import { startTurn } from "./turn-start-ops.js";
import * as turnRecords from "./turn-record-ops.js";
import { withChecks } from "../shared/checked.js";
import { runtimeChecks } from "../shared/runtime-checks.js";
import { budgetChecks } from "../shared/budget-checks.js";
import type { TenantBudgetStore } from "../../ports/budget-guard.js";
import type { MemoryContext } from "./context.js";
import { createKeyedMutex } from "./keyed-mutex.js";
import * as agents from "./agent-ops.js";
import * as commits from "./commit-ops.js";
import * as history from "./history-ops.js";
import * as inputs from "./input-ops.js";
import * as leases from "./lease-ops.js";
import * as parking from "./parked-turn-ops.js";
import * as queue from "./queue-ops.js";
import * as sessions from "./session-ops.js";
import * as toolCalls from "./tool-call-ops.js";
import { createMemoryWebhookStore, emptyWebhooks } from "./webhook-ops.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import type { SteerNotice } from "../../ports/session-signals.js";

export interface MemoryStoreOptions {
  clock?: Clock;
  limits?: Partial<StoreLimits>;
  livenessProbe?: LivenessProbe;
  /** Decision records: lease claims, reclaims, renewal and fencing refusals. None by default. */
  logger?: StoreLogger;
}

export interface MemoryStore extends RuntimeStore, FenceAuthority, TenantBudgetStore {
  /** The webhook outboxes and endpoints of this store (its commits and parks write the rows). */
  webhooks: WebhookStore;
  /** Test hook run inside a claim, after its lease validation and before its mutation. */
  setClaimAfterValidationHook(hook?: () => Promise<void> | void): void;
  /** The session logs a commit's announcement is appended to (the log fenced by this store). */
  attachEventLog(log: AnnouncementLog): void;
  /** The quota store (memory) a commit's tenant charges reach (ADR 0038). */
  attachQuotas(quotas: QuotaStore): void;
  /** The signals' notice each new steer reaches in its submit's step (ADR 0041). */
  attachSteerNotices(notice: SteerNotice): void;
}

/** Each memory store's context, by the store: its own spend port is the store itself. */
const contexts = new WeakMap<object, MemoryContext>();

export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const ctx: MemoryContext = {
    cells: new Map(),
    generations: new Map(),
    toolCalls: new Map(),
    agents: new Map(),
    tenantSpend: new Map(),
    webhooks: emptyWebhooks(),
    clock: options.clock ?? systemClock,
    probe: options.livenessProbe ?? createProcLivenessProbe(),
    limits: { ...DEFAULT_STORE_LIMITS, ...options.limits },
    mutex: createKeyedMutex(),
    afterClaimValidation: undefined,
    log: options.logger,
  };

  const store = withChecks<RuntimeStore & TenantBudgetStore, MemoryStore>(
    { ...runtimeChecks(ctx.limits), ...budgetChecks },
    {
      webhooks: createMemoryWebhookStore(ctx, ctx.webhooks),

      setClaimAfterValidationHook(hook) {
        ctx.afterClaimValidation = hook;
      },

      attachEventLog(log) {
        ctx.announcements = log;
      },

      attachQuotas(quotas) {
        ctx.quotas = quotas;
      },

      attachSteerNotices(notice) {
        ctx.steerNotice = notice;
      },

      // The commit reaches the attached quota store and this store's own spend (ADR 0038).
      chargesInCommit({ quotas, spend }) {
        if (quotas === undefined && spend === undefined) return false;
        if (quotas !== undefined && quotas !== ctx.quotas) return false;
        return spend === undefined || contexts.get(spend) === ctx;
      },

      fenceIsLive(fence) {
        const cell = ctx.cells.get(fence.sessionId);
        if (!cell) return false;
        try {
          requireLiveFence(cell, fence, ctx.clock.nowMs());
          return true;
        } catch {
          return false;
        }
      },

      commit: (commit) => commits.commitRuntimeState(ctx, commit),
      // The commit's step takes its outbox hint and a local claim (ADR 0021, folded).
      foldsOutbox: true,
      // Announcements land only where the log was attached (ADR 0011, ADR 0040).
      announcesInCommit: () => ctx.announcements !== undefined,

      loadSession: (sessionId, since) => commits.loadSession(ctx, sessionId, since),
      deleteSession: (sessionId) => sessions.deleteSession(ctx, sessionId),
      listSessions: (options) => sessions.listSessions(ctx, options),
      readSessionSummaries: (ids) => sessions.readSessionSummaries(ctx, ids),

      tryClaimLease: (sessionId, owner, ttlMs) =>
        leases.tryClaimLease(ctx, sessionId, owner, ttlMs),
      renewLease: (fence, ttlMs) => leases.renewLease(ctx, fence, ttlMs),
      renewLeases: (fences, ttlMs) => leases.renewLeases(ctx, fences, ttlMs),
      releaseLease: (fence) => leases.releaseLease(ctx, fence),
      releaseIfIdle: (fence) => leases.releaseIfIdle(ctx, fence),
      reclaimLease: (sessionId, claimant, observed, ttlMs) =>
        leases.reclaimLease(ctx, sessionId, claimant, observed, ttlMs),
      currentLease: (sessionId) => leases.currentLease(ctx, sessionId),

      enqueueWork: (draft) => queue.enqueueWork(ctx, draft),
      listWork: (sessionId) => queue.listWork(ctx, sessionId),
      cancelWork: (sessionId, ids) => queue.cancelWork(ctx, sessionId, ids),
      claimReadyWork: (fence, boundary, max) =>
        fenced(ctx, "claimReadyWork", fence, queue.claimReadyWork(ctx, fence, boundary, max)),
      claimWorkByIds: (fence, ids) =>
        fenced(ctx, "claimWorkByIds", fence, queue.claimWorkByIds(ctx, fence, ids)),

      submitInput: (draft) => inputs.submitInput(ctx, draft),
      startTurn: (draft, claim) => startTurn(ctx, draft, claim),
      listInputs: (sessionId) => inputs.listInputs(ctx, sessionId),
      cancelInputs: (sessionId, selector) => inputs.cancelInputs(ctx, sessionId, selector),
      claimInputs: (fence, point, max) =>
        fenced(ctx, "claimInputs", fence, inputs.claimInputs(ctx, fence, point, max)),
      deferActiveInputs: (fence, turnId) =>
        fenced(ctx, "deferActiveInputs", fence, inputs.deferActiveInputs(ctx, fence, turnId)),

      recordToolCalls: (fence, turnId, callIds) =>
        fenced(
          ctx,
          "recordToolCalls",
          fence,
          toolCalls.recordToolCalls(ctx, fence, turnId, callIds),
        ),
      answerToolCalls: (sessionId, turnId, answers) =>
        toolCalls.answerToolCalls(ctx, sessionId, turnId, answers),
      decideApprovals: (sessionId, turnId, decisions) =>
        toolCalls.decideApprovals(ctx, sessionId, turnId, decisions),
      closeToolCalls: (fence, turnId, waits) =>
        fenced(ctx, "closeToolCalls", fence, toolCalls.closeToolCalls(ctx, fence, turnId, waits)),
      readToolCalls: (sessionId, turnId) => toolCalls.readToolCalls(ctx, sessionId, turnId),

      parkTurn: (fence, draft) =>
        fenced(ctx, "parkTurn", fence, parking.parkTurn(ctx, fence, draft)),
      resumeTurn: (fence, turnId) =>
        fenced(ctx, "resumeTurn", fence, parking.resumeTurn(ctx, fence, turnId)),
      cancelParkedTurn: (sessionId, turnId) => parking.cancelParkedTurn(ctx, sessionId, turnId),
      readParkedTurn: (sessionId) => parking.readParkedTurn(ctx, sessionId),
      readTurns: (sessionId, query) => turnRecords.readTurns(ctx, sessionId, query),
      readTurn: (sessionId, turnId) => turnRecords.readTurn(ctx, sessionId, turnId),

      createAgent: (draft) => agents.createAgent(ctx, draft),
      updateAgent: (update) => agents.updateAgent(ctx, update),
      getAgent: (agentId, version) => agents.getAgent(ctx, agentId, version),
      listAgents: (options) => agents.listAgents(ctx, options),
      deleteAgent: (agentId) => agents.deleteAgent(ctx, agentId),

      readRevision: (sessionId, revision) => history.readRevision(ctx, sessionId, revision),
      forkSession: (draft) => history.forkSession(ctx, draft),
      rewindSession: (draft) => history.rewindSession(ctx, draft),
      vacuum: (sessionId) => sessions.vacuum(ctx, sessionId),
      // One synchronous step: no other operation interleaves between the read and the write.
      chargeTenantSpend: ({ tenant, window, costMicros }) => {
        const key = `${tenant} ${window}`;
        const spent = (ctx.tenantSpend.get(key) ?? 0) + costMicros;
        if (costMicros > 0) ctx.tenantSpend.set(key, spent);
        return Promise.resolve(spent);
      },
      close: () => Promise.resolve(),
    },
  );
  contexts.set(store, ctx);
  return store;
}

/** Records a fenced operation refused for an expired lease; untouched when nobody listens. */
function fenced<T>(
  ctx: MemoryContext,
  operation: string,
  fence: LeaseFence,
  result: Promise<T>,
): Promise<T> {
  if (!ctx.log) return result;
  return result.catch((error: unknown) => {
    if (isTetherError(error, "session_execution_lease_expired")) {
      logFenceRefused(ctx.log, operation, fence);
    }
    throw error;
  });
}
