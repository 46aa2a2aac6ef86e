// Parked turns: a turn whose every open tool call waits for someone outside (a client's result,
// a person's approval) stores its progress and releases its session instead of holding a
// replica while it waits. Answers land in the tool-call records (tool-calls.ts) from any replica;
// once every wait is settled, or the turn is cancelled or expires, any replica resumes it under
// a newer fence, taking over the claims the turn made. The commit of the turn removes the record.
import type { BatchId, InputId, SessionId } from "./ids.js";
import type { TurnInputClaim } from "./inputs.js";
import type { QueuedWorkClaim } from "./queue.js";
import type { ToolWait } from "./tool-calls.js";

import type { WebhookEvent } from "./webhooks.js";

export interface ParkTurnDraft {
  turnId: string;
  /**
   * What the turn needs settled before it can go on: client calls' results and approval
   * decisions. Each is recorded pending in the turn's tool-call records unless it exists.
   */
  waitingOn: ToolWait[];
  /** What the turn did so far, in the runtime's encoding; opaque to the store. */
  progress: string;
  /** Inputs and batches the turn claimed so far, all under the parking fence. */
  inputIds: InputId[];
  batchIds: BatchId[];
  /** How long the turn may stay parked before it expires (TETHER_PARKED_TURN_TTL_MS). */
  ttlMs: number;
  /** Written to the session's webhook outbox in the park's step (ADR 0021). */
  webhookEvent?: WebhookEvent;
  /**
   * With webhookEvent, on a store that keeps the outbox hint in its steps (RuntimeStore
   * .foldsOutbox): the hint's expect (the writer's now and the due time, as expectOutbox takes
   * them), written with the row in the park's step; without it such a store makes the outbox
   * due at once (ADR 0021 "The hint dropped in the settle"). Ignored elsewhere.
   */
  outboxExpect?: { nowMs: number; dueAtMs: number };
}

export interface ParkedTurn {
  sessionId: SessionId;
  turnId: string;
  waitingOn: ToolWait[];
  progress: string;
  inputIds: InputId[];
  batchIds: BatchId[];
  parkedAtMs: number;
  expiresAtMs: number;
  /** The fence generation that parked it: a resume must come from a greater one. */
  fencingToken: number;
  /** CancelTurn (or an interrupt) asked the parked turn to end. */
  cancelRequested: boolean;
}

/**
 * Why a parked turn can go on: every wait settled, a cancel was asked, or it expired. `waiting`
 * is none of these; the store then changes nothing.
 */
export type ParkedTurnStatus = "waiting" | "answered" | "cancelled" | "expired";

export type ResumeOutcome =
  | { status: "waiting"; parked: ParkedTurn }
  | {
      status: Exclude<ParkedTurnStatus, "waiting">;
      parked: ParkedTurn;
      /** The turn's claims, moved to the resuming fence (absent when it claimed none). */
      inputClaim: TurnInputClaim | undefined;
      workClaim: QueuedWorkClaim | undefined;
    };

export interface ParkReceipt {
  /** Every wait was already settled when the turn parked: resume it now. */
  resumable: boolean;
  expiresAtMs: number;
}

/** The status a parked turn has at `nowMs`, given which of its waits are settled. */
export function parkedStatus(
  parked: Pick<ParkedTurn, "cancelRequested" | "expiresAtMs" | "waitingOn">,
  nowMs: number,
  isSettled: (wait: ToolWait) => boolean,
): ParkedTurnStatus {
  if (parked.cancelRequested) return "cancelled";
  if (parked.expiresAtMs <= nowMs) return "expired";
  return parked.waitingOn.every(isSettled) ? "answered" : "waiting";
}

/** Waits as the stream names them: client calls, and calls waiting for approval. */
export function splitWaits(waits: readonly ToolWait[]): {
  pendingCallIds: string[];
  approvalCallIds: string[];
} {
  return {
    pendingCallIds: waits.filter((w) => w.kind === "result").map((w) => w.callId),
    approvalCallIds: waits.filter((w) => w.kind === "approval").map((w) => w.callId),
  };
}

/** Default TETHER_PARKED_TURN_TTL_MS: a day. */
export const DEFAULT_PARKED_TURN_TTL_MS = 24 * 60 * 60 * 1000;
