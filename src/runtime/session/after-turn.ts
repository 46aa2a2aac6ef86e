// What a session's hold does once a turn ended: the one decision the driver takes from a TurnEnd,
// kept apart from the loop so each end maps to its step by an exhaustive switch.
import { isTetherError } from "../../domain/errors.js";
import type { TurnEnd } from "../turn/index.js";

export type HoldStep =
  /** The turn committed: look for more work under the same lease. */
  | { kind: "next_turn" }
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
      return { kind: "next_turn" };
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
    case "failed":
      return { kind: "fail", cause: end.cause, leaveLease: false };
  }
}
