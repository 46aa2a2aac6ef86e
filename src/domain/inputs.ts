// Pending turn input: durable user input, either for the next turn or steered into a running one.
import type { ClaimId, InputId, SessionId } from "./ids.js";
import type { CancelReport } from "./queue.js";

/** Checkpoints inside a turn, in the order a turn passes them. */
export type TurnCheckpoint = "after_work" | "before_completion";
export const CHECKPOINT_ORDER: readonly TurnCheckpoint[] = ["after_work", "before_completion"];

export type InputDelivery =
  { kind: "next_turn" } | { kind: "active_turn"; turnId: string; minBoundary: TurnCheckpoint };

export interface TurnInputDraft {
  sessionId: SessionId;
  delivery: InputDelivery;
  sourceKey?: string;
  payload: string;
  /**
   * The W3C traceparent of the request that submitted it, kept beside the client's payload
   * (which is returned as written): the turn that consumes the input hangs under or links to it.
   * Not content: a retried submit under another trace is still the same input.
   */
  trace?: string;
}

export type TurnInputState = "pending" | "claimed" | "completed" | "cancelled";

export interface PendingTurnInput {
  inputId: InputId;
  sessionId: SessionId;
  seq: number;
  delivery: InputDelivery;
  sourceKey: string;
  payload: string;
  state: TurnInputState;
  claimFencingToken: number;
  claimId: string;
  /** True once an active-turn input that missed its turn was turned into a next-turn input. */
  deferred: boolean;
  /** The submitting request's traceparent, when it had one (TurnInputDraft.trace). */
  trace?: string;
}

/** Only the fields of the delivery kind, so stored records never carry stray properties. */
export function normalDelivery(d: InputDelivery): InputDelivery {
  return d.kind === "active_turn"
    ? { kind: "active_turn", turnId: d.turnId, minBoundary: d.minBoundary }
    : { kind: "next_turn" };
}

/** An input as submitting stores it: pending, unclaimed, with the sequence the store assigned. */
export function newTurnInput(
  draft: TurnInputDraft,
  inputId: InputId,
  seq: number,
): PendingTurnInput {
  return {
    inputId,
    sessionId: draft.sessionId,
    seq,
    delivery: normalDelivery(draft.delivery),
    sourceKey: draft.sourceKey ?? "",
    payload: draft.payload,
    state: "pending",
    claimFencingToken: 0,
    claimId: "",
    deferred: false,
    ...(draft.trace !== undefined && draft.trace !== "" && { trace: draft.trace }),
  };
}

export interface SubmitInputReceipt {
  input: PendingTurnInput;
  deduplicated: boolean;
  /**
   * A turn held the session when the input was stored (a live lease, or a turn parked): the
   * input waits for it. Read in the same step as the store, so no separate look is needed.
   */
  sessionBusy: boolean;
}

/** Where inputs are claimed: between turns, or at a checkpoint of a running turn. */
export type InputClaimPoint =
  { kind: "idle" } | { kind: "checkpoint"; turnId: string; checkpoint: TurnCheckpoint };

export interface TurnInputClaim {
  claimId: ClaimId;
  sessionId: SessionId;
  fencingToken: number;
  inputs: PendingTurnInput[];
}

export interface TurnInputClaimCompletion {
  claimId: ClaimId;
  sessionId: SessionId;
  fencingToken: number;
  inputIds: InputId[];
}

export function inputClaimCompletion(claim: TurnInputClaim): TurnInputClaimCompletion {
  return {
    claimId: claim.claimId,
    sessionId: claim.sessionId,
    fencingToken: claim.fencingToken,
    inputIds: claim.inputs.map((i) => i.inputId),
  };
}

export type InputCancelSelector =
  | { kind: "ids"; inputIds: InputId[] }
  /** The anchor and every later input of the session. */
  | { kind: "suffix"; fromInputId: InputId };

export type InputCancelReport = CancelReport<InputId>;

export interface DeferReport {
  /** Inputs moved to next-turn by this call; a repeated call moves none. */
  deferredInputIds: InputId[];
}
