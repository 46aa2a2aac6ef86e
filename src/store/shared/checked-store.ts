// The store port's one input check. Both backends are built behind this wrapper, so every
// operation sees ids, fences and drafts that were validated here, once, with the same typed
// error on every backend; the operations themselves trust their branded types. The bad-input
// conformance laws (test/conformance) keep it honest on memory, Redis, Cluster and the wire.
import { MAX_TOOL_CALLS_PER_REQUEST } from "../../domain/tool-calls.js";
import { invalidArgument, sessionMismatch } from "../../domain/errors.js";
import { checkId, parseSessionId, type SessionId } from "../../domain/ids.js";
import type { RuntimeStore, StoreLimits } from "../../ports/runtime-store.js";
import type { TurnInputDraft } from "../../domain/inputs.js";
import type { TurnStartClaim } from "../../domain/turn-start.js";
import {
  checkBoundary,
  checkCancelSelector,
  checkClaimPoint,
  checkCommit,
  checkCount,
  checkFence,
  checkFences,
  checkIdList,
  checkAgentDraft,
  checkOwner,
  checkParkDraft,
  checkQueuedWorkDraft,
  checkToolAnswers,
  checkDecisions,
  checkWaits,
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
/**
 * Runs `check`, then `run`; a refused argument becomes a rejected promise. Not an async function:
 * the store's hot path pays no extra promise per call.
 */
function checked<R>(check: () => void, run: () => Promise<R>): Promise<R> {
  try {
    check();
  } catch (error) {
    return Promise.reject(error);
  }
  return run();
}

export function withInputChecks<T extends RuntimeStore>(inner: T, limits: StoreLimits): T {
  const maxIds = limits.maxBatchesPerClaim;
  const checkSessionId = (id: SessionId): void => void parseSessionId(id);
  const startTurn = inner.startTurn?.bind(inner);
  return {
    ...inner,
    commit: (commit) =>
      checked(
        () => {
          checkCommit(commit, limits);
        },
        () => inner.commit(commit),
      ),
    loadSession: (id, since) =>
      checked(
        () => {
          checkSessionId(id);
          if (since) checkTranscriptMark(since);
        },
        () => inner.loadSession(id, since),
      ),
    deleteSession: (id) =>
      checked(
        () => checkSessionId(id),
        () => inner.deleteSession(id),
      ),
    listSessions: (options) =>
      checked(
        () => {
          checkCount("limit", options?.limit, 1, MAX_SESSION_PAGE);
        },
        () => inner.listSessions(options),
      ),
    readSessionSummaries: (ids) =>
      checked(
        () => {
          if (!Array.isArray(ids) || ids.length > MAX_SESSION_PAGE) {
            throw invalidArgument("session_ids", `must be a list of at most ${MAX_SESSION_PAGE}`);
          }
          ids.forEach(checkSessionId);
        },
        () => inner.readSessionSummaries(ids),
      ),

    tryClaimLease: (id, owner, ttlMs) =>
      checked(
        () => {
          checkSessionId(id);
          checkOwner(owner);
          checkTtl(ttlMs);
        },
        () => inner.tryClaimLease(id, owner, ttlMs),
      ),
    renewLease: (fence, ttlMs) =>
      checked(
        () => {
          checkFence(fence);
          checkTtl(ttlMs);
        },
        () => inner.renewLease(fence, ttlMs),
      ),
    renewLeases: (fences, ttlMs) =>
      checked(
        () => {
          checkFences(fences);
          checkTtl(ttlMs);
        },
        () => inner.renewLeases(fences, ttlMs),
      ),
    releaseLease: (fence) =>
      checked(
        () => {
          checkFence(fence);
        },
        () => inner.releaseLease(fence),
      ),
    releaseIfIdle: (fence) =>
      checked(
        () => {
          checkFence(fence);
        },
        () => inner.releaseIfIdle(fence),
      ),
    reclaimLease: (id, claimant, observed, ttlMs) =>
      checked(
        () => {
          checkSessionId(id);
          checkOwner(claimant, "claimant");
          checkFence(observed, "observed");
          checkTtl(ttlMs);
          if (observed.sessionId !== id) {
            throw sessionMismatch(id, "observed.session_id", observed.sessionId);
          }
        },
        () => inner.reclaimLease(id, claimant, observed, ttlMs),
      ),
    currentLease: (id) =>
      checked(
        () => checkSessionId(id),
        () => inner.currentLease(id),
      ),

    enqueueWork: (draft) =>
      checked(
        () => {
          checkQueuedWorkDraft(draft, limits);
        },
        () => inner.enqueueWork(draft),
      ),
    listWork: (id) =>
      checked(
        () => checkSessionId(id),
        () => inner.listWork(id),
      ),
    cancelWork: (id, batchIds) =>
      checked(
        () => {
          checkSessionId(id);
          checkIdList("batch_ids", batchIds, maxIds);
        },
        () => inner.cancelWork(id, batchIds),
      ),
    claimReadyWork: (fence, boundary, maxBatches) =>
      checked(
        () => {
          checkFence(fence);
          checkBoundary(boundary);
          checkCount("max_batches", maxBatches, 1, maxIds);
        },
        () => inner.claimReadyWork(fence, boundary, maxBatches),
      ),
    claimWorkByIds: (fence, batchIds) =>
      checked(
        () => {
          checkFence(fence);
          checkIdList("batch_ids", batchIds, maxIds);
        },
        () => inner.claimWorkByIds(fence, batchIds),
      ),

    submitInput: (draft) =>
      checked(
        () => {
          checkTurnInputDraft(draft, limits);
        },
        () => inner.submitInput(draft),
      ),
    listInputs: (id) =>
      checked(
        () => checkSessionId(id),
        () => inner.listInputs(id),
      ),
    cancelInputs: (id, selector) =>
      checked(
        () => {
          checkSessionId(id);
          checkCancelSelector(selector, maxIds);
        },
        () => inner.cancelInputs(id, selector),
      ),
    claimInputs: (fence, point, maxInputs) =>
      checked(
        () => {
          checkFence(fence);
          checkClaimPoint(point);
          checkCount("max_inputs", maxInputs, 1, maxIds);
        },
        () => inner.claimInputs(fence, point, maxInputs),
      ),
    ...(startTurn && {
      startTurn: (draft: TurnInputDraft, claim: TurnStartClaim) =>
        checked(
          () => {
            checkTurnInputDraft(draft, limits);
            if (draft.delivery.kind !== "next_turn") {
              throw invalidArgument("delivery", "a turn start takes next-turn input only");
            }
            checkOwner(claim?.owner);
            checkTtl(claim.ttlMs);
            checkCount("max_inputs", claim.maxInputs, 1, maxIds);
            if (claim.since) checkTranscriptMark(claim.since);
          },
          () => startTurn(draft, claim),
        ),
    }),
    deferActiveInputs: (fence, turnId) =>
      checked(
        () => {
          checkFence(fence);
          checkId("turn_id", turnId);
        },
        () => inner.deferActiveInputs(fence, turnId),
      ),

    recordToolCalls: (fence, turnId, waits) =>
      checked(
        () => {
          checkFence(fence);
          checkId("turn_id", turnId);
          checkWaits("call_ids", waits, MAX_TOOL_CALLS_PER_REQUEST);
        },
        () => inner.recordToolCalls(fence, turnId, waits),
      ),
    answerToolCalls: (id, turnId, answers) =>
      checked(
        () => {
          checkSessionId(id);
          checkId("turn_id", turnId);
          checkToolAnswers(answers, limits);
        },
        () => inner.answerToolCalls(id, turnId, answers),
      ),
    decideApprovals: (id, turnId, decisions) =>
      checked(
        () => {
          checkSessionId(id);
          checkId("turn_id", turnId);
          checkDecisions(decisions, limits);
        },
        () => inner.decideApprovals(id, turnId, decisions),
      ),
    closeToolCalls: (fence, turnId, waits) =>
      checked(
        () => {
          checkFence(fence);
          checkId("turn_id", turnId);
          if (waits !== undefined) checkWaits("call_ids", waits, MAX_TOOL_CALLS_PER_REQUEST);
        },
        () => inner.closeToolCalls(fence, turnId, waits),
      ),
    readToolCalls: (id, turnId) =>
      checked(
        () => {
          checkSessionId(id);
          checkId("turn_id", turnId);
        },
        () => inner.readToolCalls(id, turnId),
      ),

    parkTurn: (fence, draft) =>
      checked(
        () => {
          checkFence(fence);
          checkParkDraft(draft, limits);
        },
        () => inner.parkTurn(fence, draft),
      ),
    resumeTurn: (fence, turnId) =>
      checked(
        () => {
          checkFence(fence);
          checkId("turn_id", turnId);
        },
        () => inner.resumeTurn(fence, turnId),
      ),
    cancelParkedTurn: (id, turnId) =>
      checked(
        () => {
          checkSessionId(id);
          if (turnId !== undefined) checkId("turn_id", turnId);
        },
        () => inner.cancelParkedTurn(id, turnId),
      ),
    readParkedTurn: (id) =>
      checked(
        () => checkSessionId(id),
        () => inner.readParkedTurn(id),
      ),

    createAgent: (draft) =>
      checked(
        () => checkAgentDraft(draft, limits),
        () => inner.createAgent(draft),
      ),
    updateAgent: (update) =>
      checked(
        () => {
          checkAgentDraft(update, limits);
          checkCount("expected_version", update.expectedVersion, 1);
        },
        () => inner.updateAgent(update),
      ),
    getAgent: (agentId, version) =>
      checked(
        () => {
          checkId("agent_id", agentId);
          if (version !== undefined) checkCount("version", version, 1);
        },
        () => inner.getAgent(agentId, version),
      ),
    listAgents: (options) =>
      checked(
        () => {
          checkCount("limit", options?.limit, 1, MAX_SESSION_PAGE);
        },
        () => inner.listAgents(options),
      ),
    deleteAgent: (agentId) =>
      checked(
        () => void checkId("agent_id", agentId),
        () => inner.deleteAgent(agentId),
      ),

    readRevision: (id, revision) =>
      checked(
        () => {
          checkSessionId(id);
          checkCount("revision", revision, 1);
        },
        () => inner.readRevision(id, revision),
      ),
    forkSession: (draft) =>
      checked(
        () => {
          checkSessionId(draft?.sourceId);
          checkId("new_session_id", draft.targetId);
          checkCount("at_revision", draft.atRevision, 1);
          if (draft.targetId === draft.sourceId) {
            throw invalidArgument("new_session_id", "must name another session than session_id");
          }
        },
        () => inner.forkSession(draft),
      ),
    rewindSession: (draft) =>
      checked(
        () => {
          checkSessionId(draft?.sessionId);
          checkCount("to_revision", draft.toRevision, 1);
          checkCount("expected_head_revision", draft.expectedHeadRevision, 1);
        },
        () => inner.rewindSession(draft),
      ),

    vacuum: (id) =>
      checked(
        () => checkSessionId(id),
        () => inner.vacuum(id),
      ),
  };
}
