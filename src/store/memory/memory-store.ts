// The in-memory reference store: the embedded default and the oracle of the conformance suite.
// Each operation is one serialized step per session (see keyed-mutex.ts).
import { isTetherError } from "../../domain/errors.js";
import { sessionId as parseSessionId, type SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { SessionListPage, SessionSnapshot, VacuumReport } from "../../domain/session.js";
import { systemClock, type Clock } from "../../ports/clock.js";
import type { LivenessProbe } from "../../ports/liveness-probe.js";
import {
  DEFAULT_STORE_LIMITS,
  type RuntimeStore,
  type StoreLimits,
} from "../../ports/runtime-store.js";
import { createProcLivenessProbe } from "../shared/local-process.js";
import { logFenceRefused, type StoreLogger } from "../shared/store-log.js";
import { checkCount } from "../shared/validate.js";
import { atomically, type MemoryContext } from "./context.js";
import { createKeyedMutex } from "./keyed-mutex.js";
import { commitRuntimeState } from "./memory-commit.js";
import * as inputs from "./memory-inputs.js";
import * as leases from "./memory-leases.js";
import * as queue from "./memory-queue.js";
import { copy } from "./session-cell.js";

export interface MemoryStoreOptions {
  clock?: Clock;
  limits?: Partial<StoreLimits>;
  livenessProbe?: LivenessProbe;
  /** Decision records: lease claims, reclaims, renewal and fencing refusals. None by default. */
  logger?: StoreLogger;
}

export interface MemoryStore extends RuntimeStore {
  /** Test hook run inside a claim, after its lease validation and before its mutation. */
  setClaimAfterValidationHook(hook?: () => Promise<void> | void): void;
}

export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const ctx: MemoryContext = {
    cells: new Map(),
    generations: new Map(),
    clock: options.clock ?? systemClock,
    probe: options.livenessProbe ?? createProcLivenessProbe(),
    limits: { ...DEFAULT_STORE_LIMITS, ...options.limits },
    mutex: createKeyedMutex(),
    afterClaimValidation: undefined,
    log: options.logger,
  };

  return rejectingNotThrowing({
    setClaimAfterValidationHook(hook) {
      ctx.afterClaimValidation = hook;
    },

    commit: (commit) => commitRuntimeState(ctx, commit),

    loadSession(rawSessionId): Promise<SessionSnapshot | undefined> {
      const sessionId = parseSessionId(rawSessionId);
      return atomically(ctx, sessionId, (cell) =>
        cell.headRevision === 0
          ? undefined
          : {
              sessionId,
              headRevision: cell.headRevision,
              turnIndex: cell.turnIndex,
              messages: [...cell.messages],
              usage: { ...cell.usage },
              metadata: { ...cell.metadata },
            },
      );
    },

    deleteSession(rawSessionId): Promise<boolean> {
      const sessionId = parseSessionId(rawSessionId);
      return atomically(ctx, sessionId, (cell) => {
        const existed = cell.headRevision > 0 || cell.batches.size > 0 || cell.inputs.size > 0;
        ctx.cells.delete(sessionId);
        return existed;
      });
    },

    listSessions({ prefix = "", cursor = "", limit }): Promise<SessionListPage> {
      checkCount("limit", limit, 1, 1000);
      const ids = [...ctx.cells.values()]
        .filter((c) => c.headRevision > 0 && c.sessionId.startsWith(prefix) && c.sessionId > cursor)
        .map((c) => c.sessionId)
        .sort();
      const page = ids.slice(0, limit);
      const more = ids.length > limit;
      return Promise.resolve({
        sessionIds: page,
        nextCursor: more ? (page[page.length - 1] ?? "") : "",
      });
    },

    tryClaimLease: (sessionId, owner, ttlMs) => leases.tryClaimLease(ctx, sessionId, owner, ttlMs),
    renewLease: (fence, ttlMs) => leases.renewLease(ctx, fence, ttlMs),
    releaseLease: (fence) => leases.releaseLease(ctx, fence),
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
    listInputs: (sessionId) => inputs.listInputs(ctx, sessionId),
    cancelInputs: (sessionId, selector) => inputs.cancelInputs(ctx, sessionId, selector),
    claimInputs: (fence, point, max) =>
      fenced(ctx, "claimInputs", fence, inputs.claimInputs(ctx, fence, point, max)),
    deferActiveInputs: (fence, turnId) =>
      fenced(ctx, "deferActiveInputs", fence, inputs.deferActiveInputs(ctx, fence, turnId)),

    vacuum(rawSessionId: SessionId): Promise<VacuumReport> {
      const sessionId = parseSessionId(rawSessionId);
      return atomically(ctx, sessionId, (cell) => {
        const report: VacuumReport = { removedBatches: 0, removedInputs: 0 };
        for (const [id, batch] of cell.batches) {
          if (batch.state === "completed" || batch.state === "cancelled") {
            cell.batches.delete(id);
            if (batch.sourceKey) cell.workSourceKeys.delete(batch.sourceKey);
            report.removedBatches++;
          }
        }
        for (const [id, input] of cell.inputs) {
          if (input.state === "completed" || input.state === "cancelled") {
            cell.inputs.delete(id);
            if (input.sourceKey) cell.inputSourceKeys.delete(input.sourceKey);
            report.removedInputs++;
          }
        }
        return copy(report);
      });
    },

    close: () => Promise.resolve(),
  });
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

/**
 * Input checks run before each serialized step and throw synchronously; callers of a
 * promise-returning port expect a rejection instead (Promise.all, .catch, fire-and-forget).
 */
function rejectingNotThrowing<T extends object>(target: T): T {
  for (const [name, value] of Object.entries(target)) {
    if (typeof value !== "function") continue;
    const fn = value as (...args: unknown[]) => unknown;
    (target as Record<string, unknown>)[name] = (...args: unknown[]): unknown => {
      try {
        return fn(...args);
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return target;
}
