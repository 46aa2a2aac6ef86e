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
  /** The lease and what was claimed and read with it: hand it to driver.driveStarted. */
  started?: StartedTurn;
}

const withMark = (mark: TranscriptMark | undefined): { since?: TranscriptMark } =>
  mark ? { since: mark } : {};

export function submitOrStart(
  deps: RuntimeDeps,
  /** A loop of this replica runs the session (SessionDriver.isDriving). */
  isDriving: (sessionId: TurnInputDraft["sessionId"]) => boolean,
  draft: TurnInputDraft,
): Promise<Submitted> {
  const { sessionId } = draft;
  if (!deps.store.startTurn || draft.delivery.kind !== "next_turn" || isDriving(sessionId)) {
    return deps.store.submitInput(draft).then((submitted) => ({ submitted }));
  }
  return deps.store.startTurn(draft, {
    owner: deps.owner,
    ttlMs: deps.leaseTtlMs,
    maxInputs: INPUTS_PER_TURN,
    ...withMark(deps.transcripts.mark(sessionId)),
  });
}
