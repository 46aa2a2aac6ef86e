// Commits of the memory store: stamp, head CAS, claim completions and lease release, one step.
import type { TenantCommitCharges } from "../../domain/tenant-charges.js";
import {
  commitStampConflict,
  headRevisionConflict,
  parkedTurnMismatch,
  queuedWorkClaimSuperseded,
  turnInputClaimSuperseded,
} from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import {
  markedCount,
  type CommitAnnouncement,
  type CommitReceipt,
  type FoldedOutboxClaim,
  type RuntimeCommit,
  type SessionSnapshot,
  type TranscriptMark,
} from "../../domain/session.js";
import { logClaimSuperseded, type StoreLogger } from "../shared/store-log.js";
import { metadataBytes } from "../../domain/storage-quotas.js";
import { metadataOverLimit, metadataRefusal } from "../shared/metadata-limits.js";
import { atomically, type MemoryContext } from "./context.js";
import { recordRevision } from "./history-ops.js";
import { deferTurnInputs } from "./input-ops.js";
import { liveLease, requireLiveFence, type SessionCell } from "./session-cell.js";
import type { AnnouncementLog } from "./event-log.js";
import type { SessionEvent } from "../../domain/session-events.js";
import { waitsForHolder } from "./lease-ops.js";
import { closeTurnCalls } from "./tool-call-ops.js";
import { claimRows, hintWrittenRow, writeOutboxRow } from "./webhook-state.js";
import { tenantOfOutbox } from "../../domain/webhooks.js";
import { writeTurnRecord } from "./turn-record-ops.js";
import type { TurnEndingCommit } from "../../domain/turn-records.js";

/** Every check of a commit; throws before anything is written. */
function checkApplicable(
  cell: SessionCell,
  commit: RuntimeCommit,
  nowMs: number,
  log: StoreLogger | undefined,
): void {
  if (commit.expectedHeadRevision !== cell.headRevision) {
    throw headRevisionConflict(cell.sessionId, commit.expectedHeadRevision, cell.headRevision);
  }
  if (commit.parkedTurnId !== undefined && cell.parked?.turnId !== commit.parkedTurnId) {
    throw parkedTurnMismatch(commit.parkedTurnId, cell.parked?.turnId);
  }
  const generation = liveLease(cell, nowMs)?.fencingToken;
  for (const completion of commit.completeQueueClaims ?? []) {
    const held =
      generation === completion.fencingToken &&
      completion.batchIds.every((id) => {
        const batch = cell.batches.get(id);
        return batch?.state === "claimed" && batch.claimId === completion.claimId;
      });
    if (!held) {
      const { claimId, fencingToken } = completion;
      logClaimSuperseded(log, cell.sessionId, "queued_work", claimId, fencingToken);
      throw queuedWorkClaimSuperseded(cell.sessionId, claimId);
    }
  }
  for (const completion of commit.completeInputClaims ?? []) {
    const held =
      generation === completion.fencingToken &&
      completion.inputIds.every((id) => {
        const input = cell.inputs.get(id);
        return input?.state === "claimed" && input.claimId === completion.claimId;
      });
    if (!held) {
      const { claimId, fencingToken } = completion;
      logClaimSuperseded(log, cell.sessionId, "turn_input", claimId, fencingToken);
      throw turnInputClaimSuperseded(cell.sessionId, claimId);
    }
  }
}

function apply(cell: SessionCell, commit: RuntimeCommit): CommitReceipt {
  cell.headRevision += 1;
  if (commit.advanceTurn) cell.turnIndex += 1;
  cell.messages.push(...commit.appendMessages);
  if (commit.usage) {
    for (const key of Object.keys(cell.usage) as (keyof typeof cell.usage)[]) {
      cell.usage[key] += commit.usage[key] ?? 0;
    }
  }
  cell.costMicros += commit.costMicros ?? 0;
  for (const [key, value] of Object.entries(commit.metadataPatch ?? {})) {
    if (value === "") delete cell.metadata[key];
    else cell.metadata[key] = value;
  }
  for (const completion of commit.completeQueueClaims ?? []) {
    for (const id of completion.batchIds) {
      const batch = cell.batches.get(id);
      if (batch) batch.state = "completed";
    }
  }
  for (const completion of commit.completeInputClaims ?? []) {
    for (const id of completion.inputIds) {
      const input = cell.inputs.get(id);
      if (input) input.state = "completed";
    }
  }
  if (commit.parkedTurnId !== undefined) cell.parked = undefined;
  if (commit.deferTurnInputs !== undefined) deferTurnInputs(cell, commit.deferTurnInputs);
  recordRevision(cell);
  if (commit.metadataPatch && Object.keys(commit.metadataPatch).length > 0) {
    cell.history.metadataLog.push({
      revision: cell.headRevision,
      patch: { ...commit.metadataPatch },
    });
  }
  const release = commit.releaseLease;
  if (
    release &&
    cell.lease?.leaseToken === release.leaseToken &&
    cell.lease.fencingToken === release.fencingToken
  ) {
    cell.lease = undefined;
  }
  const receipt: CommitReceipt = {
    sessionId: cell.sessionId,
    headRevision: cell.headRevision,
    replayed: false,
  };
  if (commit.stamp) {
    cell.stamps.set(commit.stamp.operationId, {
      contentHash: commit.stamp.contentHash,
      receipt: { ...receipt },
    });
  }
  return receipt;
}

/**
 * The turn's announcement after the commit's writes, then the release unless something waits for
 * a holder (ADR 0011): a vacant lease means the last turn was announced.
 */
function announce(
  ctx: MemoryContext,
  log: AnnouncementLog,
  cell: SessionCell,
  a: CommitAnnouncement,
  nowMs: number,
): { seq: number; released: boolean } {
  // The turn's held events first, in order, then its completion: one append in the step.
  const entries = [...(a.heldEventsJson ?? []), a.eventJson].map((json) => ({
    turnId: a.turnId,
    event: JSON.parse(json) as SessionEvent,
  }));
  const seq = log.appendNow(cell.sessionId, entries).at(-1) ?? 0;
  // The turn ended: its open client calls close here, so nothing of it needs the lease after.
  closeTurnCalls(ctx, cell.sessionId, a.turnId, nowMs);
  const released = a.releaseIfIdle && !waitsForHolder(cell);
  if (released) cell.lease = undefined;
  return { seq, released };
}

export function commitRuntimeState(
  ctx: MemoryContext,
  commit: TurnEndingCommit,
): Promise<CommitReceipt> {
  return atomically(ctx, commit.sessionId, (cell, nowMs) => {
    if (commit.stamp) {
      const seen = cell.stamps.get(commit.stamp.operationId);
      if (seen) {
        if (seen.contentHash !== commit.stamp.contentHash) {
          throw commitStampConflict(cell.sessionId, commit.stamp.operationId);
        }
        return { ...seen.receipt, replayed: true };
      }
    }
    checkApplicable(cell, commit, nowMs, ctx.log);
    const log = commit.announce && ctx.announcements;
    if (log && commit.announce) requireLiveFence(cell, commit.announce.fence, nowMs);
    const logged = cell.history.metadataLog.reduce((sum, e) => sum + metadataBytes(e.patch), 0);
    const over = metadataOverLimit(cell.metadata, logged, commit);
    if (over) throw metadataRefusal(commit, over);
    const receipt = apply(cell, commit);
    if (commit.turnEnd) {
      writeTurnRecord(cell, commit.turnEnd.turnId, nowMs, {
        status: "ended",
        end: commit.turnEnd,
        usage: commit.usage,
      });
    }
    for (const event of commit.webhookEvents ?? []) {
      writeOutboxRow(ctx.webhooks, cell.sessionId, event, undefined, nowMs);
    }
    if (commit.tenantCharges) applyTenantCharges(ctx, commit.tenantCharges);
    const outbox = commit.webhookEvents?.length ? foldOutbox(ctx, commit, nowMs) : undefined;
    const folded = outbox ? { ...receipt, outbox } : receipt;
    if (!log || !commit.announce) return folded;
    return { ...folded, announced: announce(ctx, log, cell, commit.announce, nowMs) };
  });
}

/** The commit's webhook work in its step (ADR 0021 "Folded into the commit"): expect, claim. */
function foldOutbox(
  ctx: MemoryContext,
  commit: TurnEndingCommit,
  nowMs: number,
): FoldedOutboxClaim | undefined {
  const fold = commit.outboxFold;
  const outboxId = commit.sessionId;
  // Rows without a fold are listed due at once (ADR 0021 "The hint dropped in the settle").
  hintWrittenRow(ctx.webhooks, outboxId, fold, nowMs);
  if (!fold) return undefined;
  if (!fold.claim) return undefined;
  const { claimToken, leaseMs, max } = fold.claim;
  const report = claimRows(ctx.webhooks, outboxId, claimToken, leaseMs, max, nowMs);
  const endpointsVersion = ctx.webhooks.endpointVersions.get(tenantOfOutbox(outboxId)) ?? 0;
  return { report, endpointsVersion };
}

export function loadSession(
  ctx: MemoryContext,
  sessionId: SessionId,
  since: TranscriptMark | undefined,
): Promise<SessionSnapshot | undefined> {
  return atomically(ctx, sessionId, (cell) => snapshotOf(cell, since));
}

/** loadSession's answer, inside a session's atomic step. */
export function snapshotOf(
  cell: SessionCell,
  since: TranscriptMark | undefined,
): SessionSnapshot | undefined {
  if (cell.headRevision === 0) return undefined;
  const from = markedCount(since, cell.transcriptEpoch, cell.messages.length);
  return {
    sessionId: cell.sessionId,
    headRevision: cell.headRevision,
    turnIndex: cell.turnIndex,
    messages: cell.messages.slice(from),
    messagesFrom: from,
    transcriptEpoch: cell.transcriptEpoch,
    usage: { ...cell.usage },
    ...(cell.costMicros > 0 && { costMicros: cell.costMicros }),
    metadata: { ...cell.metadata },
  };
}

/**
 * The tenant's charges in the commit's step (ADR 0038), as the separate steps apply them: the
 * memory quota store's operations run to completion without awaiting, so they land in this step.
 */
function applyTenantCharges(ctx: MemoryContext, charges: TenantCommitCharges): void {
  const { tenant, releaseSlot, quotaTokens, spend } = charges;
  if (ctx.quotas && releaseSlot !== undefined) void ctx.quotas.releaseTurnSlot(tenant, releaseSlot);
  if (ctx.quotas && quotaTokens) void ctx.quotas.countTokens(tenant, quotaTokens);
  if (spend && spend.costMicros > 0) {
    const key = `${tenant} ${spend.window}`;
    ctx.tenantSpend.set(key, (ctx.tenantSpend.get(key) ?? 0) + spend.costMicros);
  }
}
