// Pending turn input operations of the Redis store: submit, list, cancel, claim, defer.
import { randomUUID } from "node:crypto";
import { sourceKeyConflict } from "../../domain/errors.js";
import { type ClaimId, type InputId, type SessionId } from "../../domain/ids.js";
import {
  newTurnInput,
  normalDelivery,
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
import { decodeInput, int, pairs, str } from "./codec.js";
import type { RedisContext } from "./context.js";
import { statusPairs } from "./queue-ops.js";
import { refuseFence } from "./fence-refusal.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

export async function submitInput(
  ctx: RedisContext,
  draft: TurnInputDraft,
): Promise<SubmitInputReceipt> {
  const sessionId = draft.sessionId;
  const k = ctx.keys(sessionId);
  const inputId = randomUUID() as InputId;
  const delivery = normalDelivery(draft.delivery);
  const reply = await ctx.scripts.run(
    "submitInput",
    [
      k.inputs,
      k.inputPayloads,
      k.inputIndex,
      k.inputSources,
      k.sequences,
      k.head,
      k.lease,
      k.parked,
    ],
    [
      inputId,
      draft.sourceKey ?? "",
      turnInputHash(draft),
      JSON.stringify(delivery),
      draft.payload,
      draft.trace ?? "",
      turnIdOfInput(sessionId, inputId),
      ctx.eventKeys(sessionId).channel,
    ],
  );
  const receipt = submitted(ctx, draft, inputId, reply);
  // The script published the steer for other replicas; this one's listener hears it now, before
  // the submitter is answered (ADR 0041).
  if (!receipt.deduplicated && delivery.kind === "active_turn") {
    ctx.steers.notice?.(sessionId, delivery.turnId);
  }
  return receipt;
}

/** submitInput's reply as a receipt (startTurn's first part too). */
export function submitted(
  ctx: RedisContext,
  draft: TurnInputDraft,
  inputId: InputId,
  reply: ScriptReply,
): SubmitInputReceipt {
  const sessionId = draft.sessionId;
  if (reply[0] === REPLY.SOURCE_KEY_CONFLICT)
    throw sourceKeyConflict(sessionId, draft.sourceKey ?? "");
  if (reply[0] === REPLY.DEDUPLICATED) {
    return {
      input: decodeInput(sessionId, reply[1] ?? null, draft.payload),
      deduplicated: true,
      sessionBusy: int(reply, 2) === 1,
    };
  }
  // The input created the session: the session list learns of it as it does of a commit.
  if (int(reply, 2) === 1) ctx.noteSession(sessionId);
  return {
    input: newTurnInput(draft, inputId, int(reply, 1)),
    deduplicated: false,
    sessionBusy: int(reply, 3) === 1,
  };
}

export async function listInputs(
  ctx: RedisContext,
  sessionId: SessionId,
): Promise<PendingTurnInput[]> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "listInputs",
    [k.inputs, k.inputPayloads, k.inputIndex, k.head],
    [],
  );
  return pairs(reply, 1, (meta, payload) => decodeInput(sessionId, meta, payload));
}

export async function cancelInputs(
  ctx: RedisContext,
  sessionId: SessionId,
  selector: InputCancelSelector,
): Promise<InputCancelReport> {
  const k = ctx.keys(sessionId);
  const args =
    selector.kind === "ids" ? ["ids", ...selector.inputIds] : ["suffix", selector.fromInputId];
  const reply = await ctx.scripts.run("cancelInputs", [k.inputs, k.inputIndex], args);
  return { outcomes: statusPairs<InputId, CancelStatus>(reply, 1, reply.length) };
}

export async function claimInputs(
  ctx: RedisContext,
  fence: LeaseFence,
  point: InputClaimPoint,
  maxInputs: number,
): Promise<TurnInputClaim | undefined> {
  const sessionId = fence.sessionId;
  const k = ctx.keys(sessionId);
  const claimId = randomUUID() as ClaimId;
  const [turnId, checkpoint] =
    point.kind === "checkpoint" ? [point.turnId, point.checkpoint] : ["", ""];
  const reply = await ctx.scripts.run(
    "claimInputs",
    [
      k.lease,
      k.inputs,
      k.inputPayloads,
      k.inputIndex,
      k.head,
      k.parked,
      k.turnRecords,
      k.turnOrder,
    ],
    [fence.leaseToken, fence.fencingToken, point.kind, turnId, checkpoint, maxInputs, claimId],
  );
  if (reply[0] === REPLY.LEASE_EXPIRED) refuseFence(ctx, "claimInputs", fence);
  if (reply[0] === REPLY.NONE) return undefined;
  const inputs = pairs(reply, 1, (meta, payload) => decodeInput(sessionId, meta, payload));
  return { claimId, sessionId, fencingToken: fence.fencingToken, inputs };
}

export async function deferActiveInputs(
  ctx: RedisContext,
  fence: LeaseFence,
  turnId: string,
): Promise<DeferReport> {
  const k = ctx.keys(fence.sessionId);
  const reply = await ctx.scripts.run(
    "deferActiveInputs",
    [k.lease, k.inputs, k.inputIndex, k.head],
    [fence.leaseToken, fence.fencingToken, turnId],
  );
  if (reply[0] === REPLY.LEASE_EXPIRED) refuseFence(ctx, "deferActiveInputs", fence);
  return { deferredInputIds: reply.slice(1).map((_, i) => str(reply, i + 1) as InputId) };
}
