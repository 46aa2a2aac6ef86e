// The store port's one input check. Both backends are built behind this wrapper, so every
// operation sees ids, fences and drafts that were validated here, once, with the same typed
// error on every backend; the operations themselves trust their branded types. The bad-input
// conformance laws (test/conformance) keep it honest on memory, Redis, Cluster and the wire.
import { MAX_TOOL_CALLS_PER_REQUEST } from "../../domain/tool-calls.js";
import { sessionMismatch } from "../../domain/errors.js";
import { checkId, parseSessionId, type SessionId } from "../../domain/ids.js";
import type { RuntimeStore, StoreLimits } from "../../ports/runtime-store.js";
import {
  checkBoundary,
  checkCancelSelector,
  checkClaimPoint,
  checkCommit,
  checkCount,
  checkFence,
  checkIdList,
  checkOwner,
  checkQueuedWorkDraft,
  checkToolAnswers,
  checkTranscriptMark,
  checkTtl,
  checkTurnInputDraft,
} from "./validate.js";

/** The largest page `listSessions` serves. */
export const MAX_SESSION_PAGE = 1000;

/**
 * Wraps a backend so each operation first validates its arguments. A refused argument rejects
 * the returned promise (never a synchronous throw: callers use Promise.all and .catch).
 */
export function withInputChecks<T extends RuntimeStore>(inner: T, limits: StoreLimits): T {
  const maxIds = limits.maxBatchesPerClaim;
  const session = (id: SessionId): SessionId => parseSessionId(id);
  return {
    ...inner,
    commit: async (commit) => {
      checkCommit(commit, limits);
      return inner.commit(commit);
    },
    loadSession: async (id, since) => {
      const sessionId = session(id);
      if (since) checkTranscriptMark(since);
      return inner.loadSession(sessionId, since);
    },
    deleteSession: async (id) => inner.deleteSession(session(id)),
    listSessions: async (options) => {
      checkCount("limit", options?.limit, 1, MAX_SESSION_PAGE);
      return inner.listSessions(options);
    },

    tryClaimLease: async (id, owner, ttlMs) => {
      const sessionId = session(id);
      checkOwner(owner);
      checkTtl(ttlMs);
      return inner.tryClaimLease(sessionId, owner, ttlMs);
    },
    renewLease: async (fence, ttlMs) => {
      checkFence(fence);
      checkTtl(ttlMs);
      return inner.renewLease(fence, ttlMs);
    },
    releaseLease: async (fence) => {
      checkFence(fence);
      return inner.releaseLease(fence);
    },
    reclaimLease: async (id, claimant, observed, ttlMs) => {
      const sessionId = session(id);
      checkOwner(claimant, "claimant");
      checkFence(observed, "observed");
      checkTtl(ttlMs);
      if (observed.sessionId !== sessionId) {
        throw sessionMismatch(sessionId, "observed.session_id", observed.sessionId);
      }
      return inner.reclaimLease(sessionId, claimant, observed, ttlMs);
    },
    currentLease: async (id) => inner.currentLease(session(id)),

    enqueueWork: async (draft) => {
      checkQueuedWorkDraft(draft, limits);
      return inner.enqueueWork(draft);
    },
    listWork: async (id) => inner.listWork(session(id)),
    cancelWork: async (id, batchIds) => {
      const sessionId = session(id);
      checkIdList("batch_ids", batchIds, maxIds);
      return inner.cancelWork(sessionId, batchIds);
    },
    claimReadyWork: async (fence, boundary, maxBatches) => {
      checkFence(fence);
      checkBoundary(boundary);
      checkCount("max_batches", maxBatches, 1, maxIds);
      return inner.claimReadyWork(fence, boundary, maxBatches);
    },
    claimWorkByIds: async (fence, batchIds) => {
      checkFence(fence);
      checkIdList("batch_ids", batchIds, maxIds);
      return inner.claimWorkByIds(fence, batchIds);
    },

    submitInput: async (draft) => {
      checkTurnInputDraft(draft, limits);
      return inner.submitInput(draft);
    },
    listInputs: async (id) => inner.listInputs(session(id)),
    cancelInputs: async (id, selector) => {
      const sessionId = session(id);
      checkCancelSelector(selector, maxIds);
      return inner.cancelInputs(sessionId, selector);
    },
    claimInputs: async (fence, point, maxInputs) => {
      checkFence(fence);
      checkClaimPoint(point);
      checkCount("max_inputs", maxInputs, 1, maxIds);
      return inner.claimInputs(fence, point, maxInputs);
    },
    deferActiveInputs: async (fence, turnId) => {
      checkFence(fence);
      checkId("turn_id", turnId);
      return inner.deferActiveInputs(fence, turnId);
    },

    recordToolCalls: async (fence, turnId, callIds) => {
      checkFence(fence);
      checkId("turn_id", turnId);
      checkIdList("call_ids", callIds, MAX_TOOL_CALLS_PER_REQUEST);
      return inner.recordToolCalls(fence, turnId, callIds);
    },
    answerToolCalls: async (id, turnId, answers) => {
      const sessionId = session(id);
      checkId("turn_id", turnId);
      checkToolAnswers(answers, limits);
      return inner.answerToolCalls(sessionId, turnId, answers);
    },
    closeToolCalls: async (fence, turnId, callIds) => {
      checkFence(fence);
      checkId("turn_id", turnId);
      if (callIds !== undefined) checkIdList("call_ids", callIds, MAX_TOOL_CALLS_PER_REQUEST);
      return inner.closeToolCalls(fence, turnId, callIds);
    },
    readToolCalls: async (id, turnId) => {
      const sessionId = session(id);
      checkId("turn_id", turnId);
      return inner.readToolCalls(sessionId, turnId);
    },

    vacuum: async (id) => inner.vacuum(session(id)),
  };
}
