// A StreamTurn's submit: on a store with a one-step turn start (ADR 0023) and a session no loop
// of this replica runs, the submit also takes the lease, the input and the transcript since what
// this replica holds; otherwise the plain submit, and the driver claims on its own.
import type { TurnInputDraft, SubmitInputReceipt } from "../../domain/inputs.js";
import type { TranscriptMark } from "../../domain/session.js";
import type { TurnStartReceipt } from "../../domain/turn-start.js";
import type { RuntimeDeps } from "../deps.js";

/** Inputs one turn takes at the idle point. */
export const INPUTS_PER_TURN = 1;

/** A turn start's lease, claims and committed state (TurnStartReceipt's `started`). */
export type StartedTurn = NonNullable<TurnStartReceipt["started"]>;

export interface Submitted {
  submitted: SubmitInputReceipt;
  /** Where the log ended in the submit's step, when the store said (TurnStartReceipt). */
  logEnd?: number;
  /** The lease and what was claimed and read with it: hand it to driver.driveStarted. */
  started?: StartedTurn;
}

const withMark = (mark: TranscriptMark | undefined): { since?: TranscriptMark } =>
  mark ? { since: mark } : {};

/**
 * Whether a StreamTurn's input goes through startTurn: the store has it, the input is for the
 * next turn (not steered) and no loop of this replica runs the session (`isDriving`).
 */
export function startsInOneStep(
  deps: RuntimeDeps,
  isDriving: boolean,
  busyStrategy: string,
): boolean {
  return deps.store.startTurn !== undefined && busyStrategy !== "steer" && !isDriving;
}

/** The submit, or with `start` (startsInOneStep) the turn start. */
export function submitOrStart(
  deps: RuntimeDeps,
  start: boolean,
  draft: TurnInputDraft,
): Promise<Submitted> {
  const { sessionId } = draft;
  if (!start || !deps.store.startTurn || draft.delivery.kind !== "next_turn") {
    return deps.store.submitInput(draft).then((submitted) => ({ submitted }));
  }
  return deps.store.startTurn(draft, {
    owner: deps.owner,
    ttlMs: deps.leaseTtlMs,
    maxInputs: INPUTS_PER_TURN,
    ...withMark(deps.transcripts.mark(sessionId)),
  });
}
