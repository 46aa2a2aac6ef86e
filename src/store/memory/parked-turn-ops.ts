// Parked turns of the memory store: park, resume, cancel and read, each one serialized step.
import { writeTurnRecord } from "./turn-record-ops.js";
import { randomUUID } from "node:crypto";
import {
  parkedTurnMismatch,
  queuedWorkClaimSuperseded,
  turnInputClaimSuperseded,
} from "../../domain/errors.js";
import type { ClaimId, SessionId } from "../../domain/ids.js";
import {
  parkedStatus,
  type ParkReceipt,
  type ParkTurnDraft,
  type ParkedTurn,
  type ResumeOutcome,
} from "../../domain/parked-turns.js";
import type { LeaseFence } from "../../domain/lease.js";
import { TOOL_CALL_RETENTION_MS, type ToolWait } from "../../domain/tool-calls.js";
import { waitField } from "../shared/wait-codec.js";
import { atomically, type MemoryContext } from "./context.js";
import { copy, requireLiveFence, type SessionCell } from "./session-cell.js";
import { liveRecords, touched } from "./tool-call-ops.js";
import { hintWrittenRow, writeOutboxRow } from "./webhook-state.js";

function isSettled(ctx: MemoryContext, cell: SessionCell, turnId: string, nowMs: number) {
  const records = liveRecords(ctx, cell.sessionId, turnId, nowMs);
  return (wait: ToolWait): boolean => {
    const state = records?.calls.get(waitField(wait));
    return state !== undefined && state.status !== "pending";
  };
}

export function parkTurn(
  ctx: MemoryContext,
  fence: LeaseFence,
  draft: ParkTurnDraft,
): Promise<ParkReceipt> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    if (cell.parked && cell.parked.turnId !== draft.turnId) {
      throw parkedTurnMismatch(draft.turnId, cell.parked.turnId);
    }
    for (const id of draft.inputIds) {
      const input = cell.inputs.get(id);
      if (input?.state !== "claimed" || input.claimFencingToken !== fence.fencingToken) {
        throw turnInputClaimSuperseded(cell.sessionId, input?.claimId ?? id);
      }
    }
    for (const id of draft.batchIds) {
      const batch = cell.batches.get(id);
      if (batch?.state !== "claimed" || batch.claimFencingToken !== fence.fencingToken) {
        throw queuedWorkClaimSuperseded(cell.sessionId, batch?.claimId ?? id);
      }
    }
    // Every check passed: write. The records outlive the parked turn by the usual retention.
    const records = touched(ctx, cell.sessionId, draft.turnId, nowMs);
    records.expiresAtMs = nowMs + draft.ttlMs + TOOL_CALL_RETENTION_MS;
    for (const wait of draft.waitingOn) {
      const field = waitField(wait);
      if (!records.calls.has(field)) records.calls.set(field, { ...wait, status: "pending" });
    }
    const parked: ParkedTurn = {
      sessionId: cell.sessionId,
      turnId: draft.turnId,
      waitingOn: copy(draft.waitingOn),
      progress: draft.progress,
      inputIds: [...draft.inputIds],
      batchIds: [...draft.batchIds],
      parkedAtMs: nowMs,
      expiresAtMs: nowMs + draft.ttlMs,
      fencingToken: fence.fencingToken,
      // A cancel asked while the resumed turn ran (its record stays until the commit) carries over.
      cancelRequested: cell.parked?.cancelRequested === true,
    };
    cell.parked = parked;
    cell.lease = undefined;
    writeTurnRecord(cell, draft.turnId, nowMs, { status: "waiting" });
    if (draft.webhookEvent) {
      writeOutboxRow(ctx.webhooks, cell.sessionId, draft.webhookEvent, undefined, nowMs);
      hintWrittenRow(ctx.webhooks, cell.sessionId, draft.outboxExpect, nowMs);
    }
    const status = parkedStatus(parked, nowMs, isSettled(ctx, cell, draft.turnId, nowMs));
    return { resumable: status !== "waiting", expiresAtMs: parked.expiresAtMs };
  });
}

export function resumeTurn(
  ctx: MemoryContext,
  fence: LeaseFence,
  turnId: string,
): Promise<ResumeOutcome | undefined> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    const parked = cell.parked;
    if (parked?.turnId !== turnId) return undefined;
    const status = parkedStatus(parked, nowMs, isSettled(ctx, cell, parked.turnId, nowMs));
    if (status === "waiting") return { status, parked: copy(parked) };
    writeTurnRecord(cell, turnId, nowMs, { status: "in_progress" });
    // The claims move to this fence, so the resumed turn's commit completes them.
    const inputClaimId = randomUUID() as ClaimId;
    const inputs = parked.inputIds.flatMap((id) => {
      const input = cell.inputs.get(id);
      if (input?.state !== "claimed") return [];
      input.claimFencingToken = fence.fencingToken;
      input.claimId = inputClaimId;
      return [copy(input)];
    });
    const workClaimId = randomUUID() as ClaimId;
    const batches = parked.batchIds.flatMap((id) => {
      const batch = cell.batches.get(id);
      if (batch?.state !== "claimed") return [];
      batch.claimFencingToken = fence.fencingToken;
      batch.claimId = workClaimId;
      return [copy(batch)];
    });
    const claim = { sessionId: cell.sessionId, fencingToken: fence.fencingToken };
    return {
      status,
      parked: copy(parked),
      inputClaim: inputs.length === 0 ? undefined : { ...claim, claimId: inputClaimId, inputs },
      workClaim: batches.length === 0 ? undefined : { ...claim, claimId: workClaimId, batches },
    };
  });
}

export function cancelParkedTurn(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string | undefined,
): Promise<boolean> {
  return atomically(ctx, sessionId, (cell) => {
    const parked = cell.parked;
    if (!parked || (turnId !== undefined && parked.turnId !== turnId)) return false;
    parked.cancelRequested = true;
    return true;
  });
}

export function readParkedTurn(
  ctx: MemoryContext,
  sessionId: SessionId,
): Promise<ParkedTurn | undefined> {
  return atomically(ctx, sessionId, (cell) => (cell.parked ? copy(cell.parked) : undefined));
}
