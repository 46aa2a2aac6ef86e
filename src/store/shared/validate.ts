// Input checks shared by every store backend, so bad input gets the same typed error everywhere
// and no backend ever sees an empty id, a negative ttl or an oversize payload.
import {
  MAX_TOOL_CALLS_PER_REQUEST,
  type ApprovalDecision,
  type ClientToolResult,
  type ToolWait,
} from "../../domain/tool-calls.js";
import { invalidArgument, sessionMismatch } from "../../domain/errors.js";
import { checkId } from "../../domain/ids.js";
import type { InputCancelSelector, InputClaimPoint, TurnInputDraft } from "../../domain/inputs.js";
import { CHECKPOINT_ORDER } from "../../domain/inputs.js";
import type { LeaseFence, LeaseOwner } from "../../domain/lease.js";
import { MAX_LEASE_TTL_MS, MAX_RENEWALS_PER_CALL } from "../../domain/lease.js";
import type { ClaimBoundary, QueuedWorkDraft } from "../../domain/queue.js";
import { WORK_CLASS_ORDER } from "../../domain/queue.js";
import type { AgentDraft } from "../../domain/agents.js";
import type { ParkTurnDraft } from "../../domain/parked-turns.js";
import type { CommitOutboxFold, RuntimeCommit, TranscriptMark } from "../../domain/session.js";
import type { StoreLimits } from "../../ports/runtime-store.js";

const MAX_KEY_LENGTH = 512;

export function checkTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < 0 || ttlMs > MAX_LEASE_TTL_MS) {
    throw invalidArgument("ttl_ms", `must be an integer between 0 and ${MAX_LEASE_TTL_MS}`);
  }
}

export function checkOwner(owner: LeaseOwner, field = "owner"): void {
  checkId(`${field}.owner_id`, owner?.ownerId);
  checkId(`${field}.incarnation_id`, owner.incarnationId);
  const live = owner.liveness;
  if (live?.kind === "local_process") {
    if (!Number.isInteger(live.pid) || live.pid <= 0) {
      throw invalidArgument(`${field}.liveness.pid`, "must be a positive integer");
    }
    checkText(`${field}.liveness.host_id`, live.hostId, MAX_KEY_LENGTH, false);
    checkText(`${field}.liveness.boot_id`, live.bootId, MAX_KEY_LENGTH, false);
    checkText(`${field}.liveness.process_start`, live.processStart, MAX_KEY_LENGTH, false);
  } else if (live?.kind !== "opaque") {
    throw invalidArgument(`${field}.liveness`, "must be opaque or local_process");
  }
}

export function checkFence(fence: LeaseFence, field = "fence"): void {
  checkId(`${field}.session_id`, fence?.sessionId);
  checkOwner(fence.owner, `${field}.owner`);
  checkText(`${field}.lease_token`, fence.leaseToken, MAX_KEY_LENGTH, false);
  checkCount(`${field}.fencing_token`, fence.fencingToken, 1);
}

/** renewLeases' fences: a list of at most MAX_RENEWALS_PER_CALL, each a fence. */
export function checkFences(fences: readonly LeaseFence[]): void {
  if (!Array.isArray(fences)) throw invalidArgument("fences", "must be a list");
  if (fences.length > MAX_RENEWALS_PER_CALL) {
    throw invalidArgument("fences", `must hold at most ${MAX_RENEWALS_PER_CALL} fences`);
  }
  fences.forEach((fence, i) => checkFence(fence, `fences[${i}]`));
}

export function checkToolAnswers(answers: ClientToolResult[], limits: StoreLimits): void {
  if (!Array.isArray(answers) || answers.length === 0) {
    throw invalidArgument("results", "must not be empty");
  }
  if (answers.length > MAX_TOOL_CALLS_PER_REQUEST) {
    throw invalidArgument("results", `must hold at most ${MAX_TOOL_CALLS_PER_REQUEST} results`);
  }
  answers.forEach((a, i) => {
    checkId(`results[${i}].call_id`, a?.callId);
    checkText(`results[${i}].output`, a.output, limits.maxPayloadBytes, true);
    if (typeof a.isError !== "boolean") {
      throw invalidArgument(`results[${i}].is_error`, "must be a boolean");
    }
  });
}

export function checkDecisions(decisions: ApprovalDecision[], limits: StoreLimits): void {
  if (!Array.isArray(decisions) || decisions.length === 0) {
    throw invalidArgument("decisions", "must not be empty");
  }
  if (decisions.length > MAX_TOOL_CALLS_PER_REQUEST) {
    throw invalidArgument("decisions", `must hold at most ${MAX_TOOL_CALLS_PER_REQUEST} decisions`);
  }
  decisions.forEach((d, i) => {
    checkId(`decisions[${i}].call_id`, d?.callId);
    checkText(`decisions[${i}].reason`, d.reason, limits.maxPayloadBytes, true);
    if (typeof d.approve !== "boolean") {
      throw invalidArgument(`decisions[${i}].approve`, "must be a boolean");
    }
  });
}

/** A list of typed waits: each a result or an approval of a call id. */
export function checkWaits(field: string, waits: readonly ToolWait[], max: number): void {
  if (!Array.isArray(waits)) throw invalidArgument(field, "must be a list");
  if (waits.length === 0) throw invalidArgument(field, "must not be empty");
  if (waits.length > max) throw invalidArgument(field, `must hold at most ${max} waits`);
  waits.forEach((w, i) => {
    if (w?.kind !== "result" && w?.kind !== "approval") {
      throw invalidArgument(`${field}[${i}].kind`, "must be result or approval");
    }
    checkId(`${field}[${i}].call_id`, w.callId);
  });
}

export function checkTranscriptMark(mark: TranscriptMark, field = "since"): void {
  checkText(`${field}.epoch`, mark?.epoch, MAX_KEY_LENGTH, true);
  checkCount(`${field}.message_count`, mark.messageCount, 0);
}

export function checkCount(
  field: string,
  value: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(field, `must be an integer between ${min} and ${max}`);
  }
}

function checkText(field: string, value: unknown, maxBytes: number, allowEmpty: boolean): void {
  if (typeof value !== "string") throw invalidArgument(field, "must be a string");
  if (!allowEmpty && value.length === 0) throw invalidArgument(field, "must not be empty");
  if (Buffer.byteLength(value, "utf8") > maxBytes) {
    throw invalidArgument(field, `must be at most ${maxBytes} bytes`);
  }
}

function checkOptionalKey(field: string, value: string | undefined): void {
  if (value !== undefined) checkText(field, value, MAX_KEY_LENGTH, true);
}

export function checkQueuedWorkDraft(draft: QueuedWorkDraft, limits: StoreLimits): void {
  checkId("session_id", draft?.sessionId);
  if (!WORK_CLASS_ORDER.includes(draft.workClass)) {
    throw invalidArgument("work_class", "must be session_command or turn_work");
  }
  if (
    draft.deliveryPolicy !== "earliest_safe_boundary" &&
    draft.deliveryPolicy !== "after_current_turn_commit"
  ) {
    throw invalidArgument(
      "delivery_policy",
      "must be earliest_safe_boundary or after_current_turn_commit",
    );
  }
  if (draft.slotPolicy !== "join" && draft.slotPolicy !== "exclusive") {
    throw invalidArgument("slot_policy", "must be join or exclusive");
  }
  checkOptionalKey("merge_key", draft.mergeKey);
  checkOptionalKey("source_key", draft.sourceKey);
  checkText("payload", draft.payload, limits.maxPayloadBytes, true);
}

export function checkTurnInputDraft(draft: TurnInputDraft, limits: StoreLimits): void {
  checkId("session_id", draft?.sessionId);
  const delivery = draft.delivery;
  if (delivery?.kind === "active_turn") {
    checkId("delivery.turn_id", delivery.turnId);
    if (!CHECKPOINT_ORDER.includes(delivery.minBoundary)) {
      throw invalidArgument("delivery.min_boundary", "must be after_work or before_completion");
    }
  } else if (delivery?.kind !== "next_turn") {
    throw invalidArgument("delivery", "must be next_turn or active_turn");
  }
  checkOptionalKey("source_key", draft.sourceKey);
  checkText("payload", draft.payload, limits.maxPayloadBytes, true);
  checkOptionalKey("trace", draft.trace);
}

export function checkBoundary(boundary: ClaimBoundary): void {
  if (boundary !== "idle" && boundary !== "active_turn_checkpoint") {
    throw invalidArgument("boundary", "must be idle or active_turn_checkpoint");
  }
}

export function checkClaimPoint(point: InputClaimPoint): void {
  if (point?.kind === "checkpoint") {
    checkId("point.turn_id", point.turnId);
    if (!CHECKPOINT_ORDER.includes(point.checkpoint)) {
      throw invalidArgument("point.checkpoint", "must be after_work or before_completion");
    }
  } else if (point?.kind !== "idle") {
    throw invalidArgument("point", "must be idle or checkpoint");
  }
}

export function checkIdList(
  field: string,
  ids: readonly string[],
  max: number,
  mayBeEmpty = false,
): void {
  if (!Array.isArray(ids)) throw invalidArgument(field, "must be a list");
  if (ids.length === 0 && !mayBeEmpty) throw invalidArgument(field, "must not be empty");
  if (ids.length > max) throw invalidArgument(field, `must hold at most ${max} ids`);
  ids.forEach((id, i) => checkId(`${field}[${i}]`, id));
}

export function checkCancelSelector(selector: InputCancelSelector, max: number): void {
  if (selector?.kind === "ids") checkIdList("input_ids", selector.inputIds, max);
  else if (selector?.kind === "suffix") checkId("from_input_id", selector.fromInputId);
  else throw invalidArgument("selector", "must be ids or suffix");
}

export function checkCommit(commit: RuntimeCommit, limits: StoreLimits): void {
  const sessionId = checkId("session_id", commit?.sessionId);
  checkCount("expected_head_revision", commit.expectedHeadRevision, 0);
  if (!Array.isArray(commit.appendMessages)) {
    throw invalidArgument("append_messages", "must be a list");
  }
  commit.appendMessages.forEach((m, i) =>
    checkText(`append_messages[${i}]`, m, limits.maxPayloadBytes, true),
  );
  if (commit.usage) {
    for (const [name, value] of Object.entries(commit.usage)) checkCount(`usage.${name}`, value, 0);
  }
  if (commit.costMicros !== undefined) checkCount("cost_micros", commit.costMicros, 0);
  for (const [key, value] of Object.entries(commit.metadataPatch ?? {})) {
    checkText("metadata_patch key", key, MAX_KEY_LENGTH, false);
    checkText(`metadata_patch.${key}`, value, limits.maxPayloadBytes, true);
  }
  if (commit.metadataLimits) {
    checkCount("metadata_limits.max_bytes", commit.metadataLimits.maxBytes, 1);
    checkCount("metadata_limits.max_history_bytes", commit.metadataLimits.maxHistoryBytes, 1);
  }
  if (commit.stamp) {
    checkText("stamp.operation_id", commit.stamp.operationId, MAX_KEY_LENGTH, false);
    checkText("stamp.content_hash", commit.stamp.contentHash, MAX_KEY_LENGTH, false);
  }
  if (commit.releaseLease) {
    checkFence(commit.releaseLease, "release_lease");
    if (commit.releaseLease.sessionId !== sessionId) {
      throw sessionMismatch(sessionId, "release_lease.session_id", commit.releaseLease.sessionId);
    }
  }
  for (const [i, c] of (commit.completeQueueClaims ?? []).entries()) {
    if (c.sessionId !== sessionId) {
      throw sessionMismatch(sessionId, `complete_queue_claims[${i}].session_id`, c.sessionId);
    }
    checkIdList(`complete_queue_claims[${i}].batch_ids`, c.batchIds, limits.maxBatchesPerClaim);
  }
  for (const [i, c] of (commit.completeInputClaims ?? []).entries()) {
    if (c.sessionId !== sessionId) {
      throw sessionMismatch(sessionId, `complete_input_claims[${i}].session_id`, c.sessionId);
    }
    checkIdList(`complete_input_claims[${i}].input_ids`, c.inputIds, limits.maxBatchesPerClaim);
  }
  if (commit.parkedTurnId !== undefined) checkId("parked_turn_id", commit.parkedTurnId);
  if (commit.deferTurnInputs !== undefined) checkId("defer_turn_inputs", commit.deferTurnInputs);
  if (commit.outboxFold) checkOutboxFold(commit.outboxFold);
}

function checkOutboxFold(fold: CommitOutboxFold): void {
  checkCount("outbox_fold.now_ms", fold.nowMs, 0);
  checkCount("outbox_fold.due_at_ms", fold.dueAtMs, 0);
  if (!fold.claim) return;
  checkId("outbox_fold.claim.claim_token", fold.claim.claimToken);
  checkCount("outbox_fold.claim.lease_ms", fold.claim.leaseMs, 1, 24 * 60 * 60 * 1000);
  checkCount("outbox_fold.claim.max", fold.claim.max, 1, 1000);
}

export function checkParkDraft(draft: ParkTurnDraft, limits: StoreLimits): void {
  checkId("turn_id", draft?.turnId);
  checkWaits("waiting_on", draft.waitingOn, MAX_TOOL_CALLS_PER_REQUEST);
  checkText("progress", draft.progress, limits.maxPayloadBytes, true);
  checkIdList("input_ids", draft.inputIds, limits.maxBatchesPerClaim, true);
  checkIdList("batch_ids", draft.batchIds, limits.maxBatchesPerClaim, true);
  if (draft.outboxExpect) {
    checkCount("outbox_expect.now_ms", draft.outboxExpect.nowMs, 0);
    checkCount("outbox_expect.due_at_ms", draft.outboxExpect.dueAtMs, 0);
  }
  if (!Number.isSafeInteger(draft.ttlMs) || draft.ttlMs < 1) {
    throw invalidArgument("ttl_ms", "must be a positive integer of milliseconds");
  }
}

export function checkAgentDraft(draft: AgentDraft, limits: StoreLimits): void {
  checkId("agent_id", draft?.agentId);
  checkText("display_name", draft.displayName, MAX_KEY_LENGTH, true);
  checkText("definition", draft.definition, limits.maxPayloadBytes, true);
}
