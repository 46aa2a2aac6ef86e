// What a session's hold does once a turn ended: the one decision the driver takes from a TurnEnd,
// kept apart from the loop so each end maps to its step by an exhaustive switch.
import { isTetherError } from "../../domain/errors.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { RuntimeLogger } from "../deps.js";
import type { TurnEnd } from "../turn/index.js";
import { assertNever, parkedWake, type HoldEnd } from "./hold-end.js";

export type HoldStep =
  /** The turn committed: look for more work under the same lease. */
  | { kind: "next_turn" }
  /**
   * The hold ends (HoldEnd): `released` when the commit let the lease go, `parked` when the turn
   * parked, `closing` when it was handed over, `lost` when the lease is gone. `leaveLease`: even
   * the release is left to the lease's expiry, so a successor looks for what to announce.
   */
  | { kind: "end"; end: HoldEnd; cause?: unknown; leaveLease: boolean }
  /** A store failure ends the session's loop as a failure (it is driven again later). */
  | { kind: "fail"; cause: unknown; leaveLease: boolean };

const ends = (end: HoldEnd, more: { cause?: unknown; leaveLease?: boolean } = {}): HoldStep => ({
  kind: "end",
  end,
  leaveLease: false,
  ...more,
});

/** The hold's step after `end`, at `nowMs` (when a parked turn is next looked at). */
export function afterTurn(end: TurnEnd, nowMs: number): HoldStep {
  switch (end.kind) {
    case "finished":
    case "cancelled":
      return end.released === true ? ends({ kind: "released" }) : { kind: "next_turn" };
    case "parked":
      return ends(parkedWake(nowMs, end.receipt.expiresAtMs, end.receipt.resumable));
    case "handed_over":
      // Its claims stay for a successor (the ready hint is still set), which re-runs the turn
      // under the same id; the lease is released.
      return ends({ kind: "closing" });
    case "lease_lost":
      return ends({ kind: "lost" }, { cause: end.cause });
    case "unannounced":
      // Left to expire, so the next holder looks for the completion to announce.
      return isTetherError(end.cause, "session_execution_lease_expired")
        ? ends({ kind: "lost" }, { cause: end.cause, leaveLease: true })
        : { kind: "fail", cause: end.cause, leaveLease: true };
    case "commit_unknown":
      // The commit may have landed unannounced: left to expire, as after `unannounced`.
      return { kind: "fail", cause: end.cause, leaveLease: true };
    case "failed":
      return { kind: "fail", cause: end.cause, leaveLease: false };
    default:
      return assertNever(end);
  }
}

/** The record of a hold's step after a turn that did not simply commit. */
export function logHoldStep(logger: RuntimeLogger, fence: LeaseFence, step: HoldStep): void {
  if (step.kind !== "end") return;
  const fields = { sessionId: fence.sessionId, fencingToken: fence.fencingToken };
  switch (step.end.kind) {
    case "parked":
      logger.info(fields, "turn parked: it waits for answers from outside");
      return;
    case "closing":
      logger.info(
        fields,
        "turn handed over: the replica is draining and the turn waits for a client",
      );
      return;
    case "lost":
      logger.warn({ ...fields, error: step.cause }, "turn abandoned: lease lost");
      return;
    case "released":
    case "no_work":
    case "quota_wait":
      return;
    default:
      assertNever(step.end);
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
