// How a turn ends, as the value executeTurn returns: the session driver decides what the hold does
// next from it (look for more work, wait for a parked turn, leave the lease) by one exhaustive
// switch. Only a defect travels as an exception.
import { isTetherError } from "../../domain/errors.js";
import type { ParkReceipt } from "../../domain/parked-turns.js";
import type { TurnOutcome } from "../../domain/turn-outcome.js";

export type TurnEnd =
  /**
   * Committed and announced with the outcome the turn reached (any but a cancel). `released`:
   * the commit released the lease too, as nothing waited for a holder (ADR 0011).
   */
  | {
      kind: "finished";
      turnId: string;
      outcome: TurnOutcome;
      headRevision: number;
      released?: boolean;
    }
  /** Committed and announced after a cancel (CancelTurn, an interrupt, a cancelled parked turn). */
  | { kind: "cancelled"; turnId: string; headRevision: number; released?: boolean }
  /** Stored its progress and released the session; the store resumes it. */
  | { kind: "parked"; turnId: string; receipt: ParkReceipt }
  /**
   * Stopped uncommitted: the replica is closing and the turn waits for a client's answer that
   * may outlast the drain. Its claims stay for a successor, which runs it again under its id.
   */
  | { kind: "handed_over"; turnId: string }
  /** Stopped uncommitted: this replica no longer holds the session (a fenced write was refused). */
  | { kind: "lease_lost"; turnId: string; cause: unknown }
  /**
   * Committed, but its turn_completed did not reach the log. The holder must leave the lease to
   * expire: a successor that finds it expired announces the commit, a released session has none.
   */
  | { kind: "unannounced"; turnId: string; headRevision: number; cause: unknown }
  /**
   * The commit's reply never came (the store went away with it in flight, or replicas did not
   * confirm it): it may have landed unannounced. Like `unannounced`, the holder leaves the lease
   * to expire, so a successor looks and announces it, or runs the turn again if it did not land.
   */
  | { kind: "commit_unknown"; turnId: string; cause: unknown }
  /** Stopped uncommitted on a store failure that is not a lost lease (the store went away). */
  | { kind: "failed"; turnId: string; cause: unknown };

export type TurnEndKind = TurnEnd["kind"];

/** The end of a turn that committed and announced `outcome` at `headRevision`. */
export function committedEnd(
  turnId: string,
  outcome: TurnOutcome,
  headRevision: number,
  released = false,
): TurnEnd {
  const end: TurnEnd =
    outcome.kind === "stopped" && outcome.reason === "cancelled"
      ? { kind: "cancelled", turnId, headRevision }
      : { kind: "finished", turnId, outcome, headRevision };
  if (released) end.released = true;
  return end;
}

/** Store refusals that mean the fence no longer holds the session's lease. */
const LEASE_GONE = new Set([
  "session_execution_lease_expired",
  "queued_work_claim_superseded",
  "turn_input_claim_superseded",
]);

/** Store failures of a commit that say nothing of whether it landed. */
const COMMIT_UNKNOWN = new Set(["store_unavailable", "replication_unconfirmed"]);

/** The end of a turn whose commit threw: unknown when the failure says nothing of its fate. */
export function endOfCommitError(turnId: string, error: unknown): TurnEnd {
  if (isTetherError(error) && COMMIT_UNKNOWN.has(error.code)) {
    return { kind: "commit_unknown", turnId, cause: error };
  }
  return endOfError(turnId, error);
}

/**
 * The end of a turn stopped by an error before it committed: a refused fence is a lost lease,
 * another store error a failure. Anything else is a defect, not an end, and is thrown on.
 */
export function endOfError(turnId: string, error: unknown): TurnEnd {
  if (isTetherError(error) && LEASE_GONE.has(error.code)) {
    return { kind: "lease_lost", turnId, cause: error };
  }
  if (isTetherError(error)) return { kind: "failed", turnId, cause: error };
  throw error;
}
