// The runtime store's check table (ADR 0034): one row per RuntimeStore operation, run by
// `withChecks` before the backend sees the call. Each row throws the TetherError the bad-input
// conformance laws expect, naming the field.
import { MAX_TOOL_CALLS_PER_REQUEST } from "../../domain/tool-calls.js";
import { invalidArgument, sessionMismatch } from "../../domain/errors.js";
import { checkId, parseSessionId, type SessionId } from "../../domain/ids.js";
import type { RuntimeStore, StoreLimits } from "../../ports/runtime-store.js";
import { nothingToCheck, type CheckTable } from "./checked.js";
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

/** The largest page of turn records `readTurns` serves. */
export const MAX_TURN_PAGE = 1000;

/** The largest page `listSessions` serves. */
export const MAX_SESSION_PAGE = 1000;

const checkSessionId = (id: SessionId): void => void parseSessionId(id);
const checkTurnId = (turnId: string): void => void checkId("turn_id", turnId);

/** Sessions, leases and the queue: what names a session or carries its fence. */
function sessionRows(limits: StoreLimits) {
  const maxIds = limits.maxBatchesPerClaim;
  return {
    commit: (commit) => checkCommit(commit, limits),
    loadSession: (id, since) => {
      checkSessionId(id);
      if (since) checkTranscriptMark(since);
    },
    deleteSession: checkSessionId,
    listSessions: (options) => checkCount("limit", options?.limit, 1, MAX_SESSION_PAGE),
    readSessionSummaries: (ids) => {
      if (!Array.isArray(ids) || ids.length > MAX_SESSION_PAGE) {
        throw invalidArgument("session_ids", `must be a list of at most ${MAX_SESSION_PAGE}`);
      }
      ids.forEach(checkSessionId);
    },

    tryClaimLease: (id, owner, ttlMs) => {
      checkSessionId(id);
      checkOwner(owner);
      checkTtl(ttlMs);
    },
    renewLease: (fence, ttlMs) => {
      checkFence(fence);
      checkTtl(ttlMs);
    },
    renewLeases: (fences, ttlMs) => {
      checkFences(fences);
      checkTtl(ttlMs);
    },
    releaseLease: (fence) => checkFence(fence),
    releaseIfIdle: (fence) => checkFence(fence),
    reclaimLease: (id, claimant, observed, ttlMs) => {
      checkSessionId(id);
      checkOwner(claimant, "claimant");
      checkFence(observed, "observed");
      checkTtl(ttlMs);
      if (observed.sessionId !== id) {
        throw sessionMismatch(id, "observed.session_id", observed.sessionId);
      }
    },
    currentLease: checkSessionId,

    enqueueWork: (draft) => checkQueuedWorkDraft(draft, limits),
    listWork: checkSessionId,
    cancelWork: (id, batchIds) => {
      checkSessionId(id);
      checkIdList("batch_ids", batchIds, maxIds);
    },
    claimReadyWork: (fence, boundary, maxBatches) => {
      checkFence(fence);
      checkBoundary(boundary);
      checkCount("max_batches", maxBatches, 1, maxIds);
    },
    claimWorkByIds: (fence, batchIds) => {
      checkFence(fence);
      checkIdList("batch_ids", batchIds, maxIds);
    },
  } satisfies Partial<CheckTable<RuntimeStore>>;
}

/** Inputs, tool calls and parked turns: a turn's own steps. */
function turnRows(limits: StoreLimits) {
  const maxIds = limits.maxBatchesPerClaim;
  return {
    submitInput: (draft) => checkTurnInputDraft(draft, limits),
    listInputs: checkSessionId,
    cancelInputs: (id, selector) => {
      checkSessionId(id);
      checkCancelSelector(selector, maxIds);
    },
    claimInputs: (fence, point, maxInputs) => {
      checkFence(fence);
      checkClaimPoint(point);
      checkCount("max_inputs", maxInputs, 1, maxIds);
    },
    startTurn: (draft, claim) => {
      checkTurnInputDraft(draft, limits);
      if (draft.delivery.kind !== "next_turn") {
        throw invalidArgument("delivery", "a turn start takes next-turn input only");
      }
      checkOwner(claim?.owner);
      checkTtl(claim.ttlMs);
      checkCount("max_inputs", claim.maxInputs, 1, maxIds);
      if (claim.since) checkTranscriptMark(claim.since);
    },
    deferActiveInputs: (fence, turnId) => {
      checkFence(fence);
      checkTurnId(turnId);
    },

    recordToolCalls: (fence, turnId, waits) => {
      checkFence(fence);
      checkTurnId(turnId);
      checkWaits("call_ids", waits, MAX_TOOL_CALLS_PER_REQUEST);
    },
    answerToolCalls: (id, turnId, answers) => {
      checkSessionId(id);
      checkTurnId(turnId);
      checkToolAnswers(answers, limits);
    },
    decideApprovals: (id, turnId, decisions) => {
      checkSessionId(id);
      checkTurnId(turnId);
      checkDecisions(decisions, limits);
    },
    closeToolCalls: (fence, turnId, waits) => {
      checkFence(fence);
      checkTurnId(turnId);
      if (waits !== undefined) checkWaits("call_ids", waits, MAX_TOOL_CALLS_PER_REQUEST);
    },
    readToolCalls: (id, turnId) => {
      checkSessionId(id);
      checkTurnId(turnId);
    },

    parkTurn: (fence, draft) => {
      checkFence(fence);
      checkParkDraft(draft, limits);
    },
    resumeTurn: (fence, turnId) => {
      checkFence(fence);
      checkTurnId(turnId);
    },
    cancelParkedTurn: (id, turnId) => {
      checkSessionId(id);
      if (turnId !== undefined) checkTurnId(turnId);
    },
    readParkedTurn: checkSessionId,
    readTurns: (id, query) => {
      checkSessionId(id);
      checkCount("limit", query?.limit, 1, MAX_TURN_PAGE);
      if (query.order !== "asc" && query.order !== "desc") {
        throw invalidArgument("order", "must be asc or desc");
      }
      if (query.after !== undefined) checkTurnId(query.after);
    },
    readTurn: (id, turnId) => {
      checkSessionId(id);
      checkTurnId(turnId);
    },
  } satisfies Partial<CheckTable<RuntimeStore>>;
}

/** Agents, history and upkeep: what a client manages beside its sessions. */
function managementRows(limits: StoreLimits) {
  return {
    createAgent: (draft) => checkAgentDraft(draft, limits),
    updateAgent: (update) => {
      checkAgentDraft(update, limits);
      checkCount("expected_version", update.expectedVersion, 1);
    },
    getAgent: (agentId, version) => {
      checkId("agent_id", agentId);
      if (version !== undefined) checkCount("version", version, 1);
    },
    listAgents: (options) => checkCount("limit", options?.limit, 1, MAX_SESSION_PAGE),
    deleteAgent: (agentId) => void checkId("agent_id", agentId),

    readRevision: (id, revision) => {
      checkSessionId(id);
      checkCount("revision", revision, 1);
    },
    forkSession: (draft) => {
      checkSessionId(draft?.sourceId);
      checkId("new_session_id", draft.targetId);
      checkCount("at_revision", draft.atRevision, 1);
      if (draft.targetId === draft.sourceId) {
        throw invalidArgument("new_session_id", "must name another session than session_id");
      }
    },
    rewindSession: (draft) => {
      checkSessionId(draft?.sessionId);
      checkCount("to_revision", draft.toRevision, 1);
      checkCount("expected_head_revision", draft.expectedHeadRevision, 1);
    },

    vacuum: checkSessionId,
    close: nothingToCheck,
  } satisfies Partial<CheckTable<RuntimeStore>>;
}

/** Every RuntimeStore operation's row; the type refuses a table that misses one. */
export function runtimeChecks(limits: StoreLimits): CheckTable<RuntimeStore> {
  return { ...sessionRows(limits), ...turnRows(limits), ...managementRows(limits) };
}
