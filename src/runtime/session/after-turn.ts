// What a session's hold does once a turn ended: the one decision the driver takes from a TurnEnd,
// kept apart from the loop so each end maps to its step by an exhaustive switch.
import { isTetherError } from "../../domain/errors.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { RuntimeLogger } from "../deps.js";
import type { TurnEnd } from "../turn/index.js";

export type HoldStep =
  /** The turn committed: look for more work under the same lease. */
  | { kind: "next_turn" }
  /** The turn committed and its commit released the lease: nothing waits, the hold ends. */
  | { kind: "released" }
  /** The turn parked (the store released the lease): look again when it can go on. */
  | { kind: "await_parked"; expiresAtMs: number; resumable: boolean }
  /** The turn was handed over: end the hold and release the lease; a successor re-runs it. */
  | { kind: "hand_over" }
  /** The lease is gone: end the hold; `leaveLease` keeps even the release for the successor. */
  | { kind: "lost"; cause: unknown; leaveLease: boolean }
  /** A store failure ends the session's loop as a failure (it is driven again later). */
  | { kind: "fail"; cause: unknown; leaveLease: boolean };

export function afterTurn(end: TurnEnd): HoldStep {
  switch (end.kind) {
    case "finished":
    case "cancelled":
      return end.released === true ? { kind: "released" } : { kind: "next_turn" };
    case "parked":
      return {
        kind: "await_parked",
        expiresAtMs: end.receipt.expiresAtMs,
        resumable: end.receipt.resumable,
      };
    case "handed_over":
      return { kind: "hand_over" };
    case "lease_lost":
      return { kind: "lost", cause: end.cause, leaveLease: false };
    case "unannounced":
      // Left to expire, so the next holder looks for the completion to announce.
      return isTetherError(end.cause, "session_execution_lease_expired")
        ? { kind: "lost", cause: end.cause, leaveLease: true }
        : { kind: "fail", cause: end.cause, leaveLease: true };
    case "commit_unknown":
      // The commit may have landed unannounced: left to expire, as after `unannounced`.
      return { kind: "fail", cause: end.cause, leaveLease: true };
    case "failed":
      return { kind: "fail", cause: end.cause, leaveLease: false };
  }
}

/** The record of a hold's step after a turn that did not simply commit. */
export function logHoldStep(logger: RuntimeLogger, fence: LeaseFence, step: HoldStep): void {
  const fields = { sessionId: fence.sessionId, fencingToken: fence.fencingToken };
  if (step.kind === "await_parked") {
    logger.info(fields, "turn parked: it waits for answers from outside");
  } else if (step.kind === "hand_over") {
    logger.info(
      fields,
      "turn handed over: the replica is draining and the turn waits for a client",
    );
  } else if (step.kind === "lost") {
    logger.warn({ ...fields, error: step.cause }, "turn abandoned: lease lost");
  }
}

/**
 * A session loop that ended by a throw. Redis going away is an outage the replica rides out (the
 * ready hint stays, and the sweep or a waiting client drives the session again), not a fault of
 * this process.
 */
export function logLoopFailure(logger: RuntimeLogger, sessionId: string, error: unknown): void {
  if (
    isTetherError(error, "store_unavailable") ||
    isTetherError(error, "replication_unconfirmed")
  ) {
    logger.warn({ sessionId, error }, "session loop stopped: store unavailable");
  } else {
    logger.error({ sessionId, error }, "session loop failed");
  }
}
