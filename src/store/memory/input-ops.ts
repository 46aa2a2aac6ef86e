// Pending turn input operations of the memory store.
import { randomUUID } from "node:crypto";
import { sourceKeyConflict } from "../../domain/errors.js";
import { type ClaimId, type InputId, type SessionId } from "../../domain/ids.js";
import {
  newTurnInput,
  CHECKPOINT_ORDER,
  type DeferReport,
  type InputCancelReport,
  type InputCancelSelector,
  type InputClaimPoint,
  type PendingTurnInput,
  type SubmitInputReceipt,
  type TurnInputClaim,
  type TurnInputDraft,
} from "../../domain/inputs.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { CancelStatus } from "../../domain/queue.js";
import { turnInputHash } from "../shared/content-hash.js";
import { turnIdOfInput } from "../../ports/turn-ids.js";
import { writeTurnRecord } from "./turn-record-ops.js";
import { atomically, type MemoryContext } from "./context.js";
import {
  copy,
  createImplicitly,
  liveLease,
  requireLiveFence,
  type SessionCell,
} from "./session-cell.js";

export function submitInput(
  ctx: MemoryContext,
  draft: TurnInputDraft,
): Promise<SubmitInputReceipt> {
  const contentHash = turnInputHash(draft);
  return atomically(ctx, draft.sessionId, (cell, nowMs) => {
    const receipt = submitInCell(cell, draft, contentHash, nowMs);
    // A new steer tells the running turn in the same step (ADR 0041): its before-completion
    // checkpoint claims only when one may be pending.
    if (!receipt.deduplicated && draft.delivery.kind === "active_turn") {
      ctx.steerNotice?.(draft.sessionId, draft.delivery.turnId);
    }
    return receipt;
  });
}

/** submitInput's step, inside a session's atomic step. */
export function submitInCell(
  cell: SessionCell,
  draft: TurnInputDraft,
  contentHash: string,
  nowMs: number,
): SubmitInputReceipt {
  const sessionBusy = liveLease(cell, nowMs) !== undefined || cell.parked !== undefined;
  if (draft.sourceKey) {
    const seen = cell.inputSourceKeys.get(draft.sourceKey);
    if (seen) {
      if (seen.contentHash !== contentHash)
        throw sourceKeyConflict(cell.sessionId, draft.sourceKey);
      const existing = cell.inputs.get(seen.id);
      if (existing) return { input: copy(existing), deduplicated: true, sessionBusy };
    }
  }
  const input = newTurnInput(draft, randomUUID() as InputId, ++cell.inputSeq);
  cell.inputs.set(input.inputId, input);
  createImplicitly(cell);
  if (draft.sourceKey)
    cell.inputSourceKeys.set(draft.sourceKey, { id: input.inputId, contentHash });
  return { input: copy(input), deduplicated: false, sessionBusy };
}

export function listInputs(ctx: MemoryContext, sessionId: SessionId): Promise<PendingTurnInput[]> {
  return atomically(ctx, sessionId, (cell) =>
    [...cell.inputs.values()]
      .filter((i) => i.state === "pending" || i.state === "claimed")
      .map(copy),
  );
}

export function cancelInputs(
  ctx: MemoryContext,
  sessionId: SessionId,
  selector: InputCancelSelector,
): Promise<InputCancelReport> {
  return atomically(ctx, sessionId, (cell) => {
    let ids: InputId[];
    if (selector.kind === "ids") {
      ids = selector.inputIds;
    } else {
      const anchor = cell.inputs.get(selector.fromInputId);
      ids = anchor
        ? [...cell.inputs.values()].filter((i) => i.seq >= anchor.seq).map((i) => i.inputId)
        : [selector.fromInputId];
    }
    return {
      outcomes: ids.map((id) => {
        const input = cell.inputs.get(id);
        let status: CancelStatus;
        if (!input) status = "not_found";
        else if (input.state === "pending") {
          input.state = "cancelled";
          status = "cancelled";
        } else status = `already_${input.state}`;
        return { id, status };
      }),
    };
  });
}

function admits(input: PendingTurnInput, point: InputClaimPoint): boolean {
  if (point.kind === "idle") return input.delivery.kind === "next_turn";
  return (
    input.delivery.kind === "active_turn" &&
    input.delivery.turnId === point.turnId &&
    CHECKPOINT_ORDER.indexOf(input.delivery.minBoundary) <=
      CHECKPOINT_ORDER.indexOf(point.checkpoint)
  );
}

export function claimInputs(
  ctx: MemoryContext,
  fence: LeaseFence,
  point: InputClaimPoint,
  maxInputs: number,
): Promise<TurnInputClaim | undefined> {
  return atomically(ctx, fence.sessionId, async (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    await ctx.afterClaimValidation?.();
    return claimInCell(cell, fence.fencingToken, point, maxInputs, nowMs);
  });
}

/** claimInputs' step after its fence check, inside a session's atomic step. */
export function claimInCell(
  cell: SessionCell,
  fencingToken: number,
  point: InputClaimPoint,
  maxInputs: number,
  nowMs: number,
): TurnInputClaim | undefined {
  // A parked turn holds the session: new turns wait for it (its resume takes its own claims).
  if (point.kind === "idle" && cell.parked) return undefined;
  const taken = [...cell.inputs.values()]
    .filter(
      (i) => i.state === "pending" || (i.state === "claimed" && i.claimFencingToken < fencingToken),
    )
    .filter((i) => admits(i, point))
    .sort((a, b) => a.seq - b.seq)
    .slice(0, maxInputs);
  if (taken.length === 0) return undefined;
  const claimId = randomUUID() as ClaimId;
  for (const input of taken) {
    input.state = "claimed";
    input.claimFencingToken = fencingToken;
    input.claimId = claimId;
  }
  // An idle claim of one input starts the turn named after it: its record says so (ADR 0037).
  const [only] = taken;
  if (point.kind === "idle" && only && taken.length === 1) {
    writeTurnRecord(cell, turnIdOfInput(cell.sessionId, only.inputId), nowMs, {
      status: "in_progress",
    });
  }
  return { claimId, sessionId: cell.sessionId, fencingToken, inputs: taken.map(copy) };
}

export function deferActiveInputs(
  ctx: MemoryContext,
  fence: LeaseFence,
  turnId: string,
): Promise<DeferReport> {
  return atomically(ctx, fence.sessionId, (cell, nowMs) => {
    requireLiveFence(cell, fence, nowMs);
    return { deferredInputIds: deferTurnInputs(cell, turnId) };
  });
}

/** The turn's steered inputs still pending become next-turn input, marked deferred. */
export function deferTurnInputs(cell: SessionCell, turnId: string): InputId[] {
  const moved: InputId[] = [];
  for (const input of cell.inputs.values()) {
    if (
      input.state === "pending" &&
      input.delivery.kind === "active_turn" &&
      input.delivery.turnId === turnId
    ) {
      input.delivery = { kind: "next_turn" };
      input.deferred = true;
      moved.push(input.inputId);
    }
  }
  return moved;
}
