// Decodes script replies into domain values. Scripts store items as JSON without their payload
// (payloads live in a separate hash); the session id comes from the call, not from Redis.
import { TetherError } from "../../domain/errors.js";
import type { BatchId, InputId, SessionId } from "../../domain/ids.js";
import type { InputDelivery, PendingTurnInput, TurnInputState } from "../../domain/inputs.js";
import type { LeaseOwner, SessionExecutionLease } from "../../domain/lease.js";
import type {
  DeliveryPolicy,
  QueuedWorkBatch,
  QueuedWorkClass,
  QueuedWorkState,
  SlotPolicy,
} from "../../domain/queue.js";
import type { UsageTotals } from "../../domain/usage.js";
import type { ScriptReply } from "./scripts.js";

type ReplyItem = ScriptReply[number];

export function str(reply: ScriptReply, index: number): string {
  const value = reply[index];
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  throw new TetherError("internal", `malformed store reply at ${index}`);
}

export function int(reply: ScriptReply, index: number): number {
  const value = Number(reply[index]);
  if (!Number.isSafeInteger(value))
    throw new TetherError("internal", `malformed store reply at ${index}`);
  return value;
}

/** A session's usage totals, as the session-reading scripts reply them: five slots from `from`. */
export function usageAt(reply: ScriptReply, from: number): UsageTotals {
  return {
    inputTokens: int(reply, from),
    outputTokens: int(reply, from + 1),
    cacheReadTokens: int(reply, from + 2),
    cacheWriteTokens: int(reply, from + 3),
    reasoningTokens: int(reply, from + 4),
  };
}

/** The owner fields the scripts compare, then the whole owner for the record. */
export function ownerArgs(owner: LeaseOwner): [string, string, string] {
  return [JSON.stringify(owner), owner.ownerId, owner.incarnationId];
}

/** `{code, tok, gen, exp, ownerJson, reentered}` */
export function decodeLease(sessionId: SessionId, reply: ScriptReply): SessionExecutionLease {
  return {
    sessionId,
    owner: JSON.parse(str(reply, 4)) as LeaseOwner,
    leaseToken: str(reply, 1),
    fencingToken: int(reply, 2),
    expiresAtMs: int(reply, 3),
  };
}

interface StoredBatch {
  batchId: string;
  enqueueSeq: number;
  workClass: QueuedWorkClass;
  deliveryPolicy: DeliveryPolicy;
  slotPolicy: SlotPolicy;
  mergeKey: string;
  sourceKey: string;
  state: QueuedWorkState;
  claimFencingToken: number;
  claimId: string;
}

function text(value: ReplyItem): string {
  if (typeof value !== "string") throw new TetherError("internal", "malformed stored item");
  return value;
}

export function decodeBatch(
  sessionId: SessionId,
  meta: ReplyItem,
  payload: ReplyItem,
): QueuedWorkBatch {
  const b = JSON.parse(text(meta)) as StoredBatch;
  return {
    batchId: b.batchId as BatchId,
    sessionId,
    enqueueSeq: b.enqueueSeq,
    workClass: b.workClass,
    deliveryPolicy: b.deliveryPolicy,
    slotPolicy: b.slotPolicy,
    mergeKey: b.mergeKey,
    sourceKey: b.sourceKey,
    payload: text(payload),
    state: b.state,
    claimFencingToken: b.claimFencingToken,
    claimId: b.claimId,
  };
}

interface StoredInput {
  inputId: string;
  seq: number;
  delivery: InputDelivery;
  sourceKey: string;
  state: TurnInputState;
  claimFencingToken: number;
  claimId: string;
  deferred: boolean;
  trace?: string;
}

export function decodeInput(
  sessionId: SessionId,
  meta: ReplyItem,
  payload: ReplyItem,
): PendingTurnInput {
  const i = JSON.parse(text(meta)) as StoredInput;
  const delivery: InputDelivery =
    i.delivery.kind === "active_turn"
      ? { kind: "active_turn", turnId: i.delivery.turnId, minBoundary: i.delivery.minBoundary }
      : { kind: "next_turn" };
  return {
    inputId: i.inputId as InputId,
    sessionId,
    seq: i.seq,
    delivery,
    sourceKey: i.sourceKey,
    payload: text(payload),
    state: i.state,
    claimFencingToken: i.claimFencingToken,
    claimId: i.claimId,
    deferred: i.deferred,
    ...(typeof i.trace === "string" && i.trace !== "" && { trace: i.trace }),
  };
}

/** Pairs `meta, payload, meta, payload, ...` from `start` to the end of the reply. */
export function pairs<T>(
  reply: ScriptReply,
  start: number,
  decode: (meta: ReplyItem, payload: ReplyItem) => T,
): T[] {
  const out: T[] = [];
  for (let i = start; i + 1 < reply.length; i += 2)
    out.push(decode(reply[i] ?? null, reply[i + 1] ?? null));
  return out;
}
