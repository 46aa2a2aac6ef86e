// Why a call about a session is refused: the drain, and a busy session under the `reject`
// strategy. Typed errors the API maps to gRPC codes (ADR 0003).
import { TetherError } from "../../domain/errors.js";
import type { SessionExecutionLease } from "../../domain/lease.js";

/** A stream ended by the drain: the client resumes from its last cursor on another replica. */
export function shuttingDown(): TetherError {
  return new TetherError(
    "store_unavailable",
    "the server is shutting down: resume from the last cursor on another replica",
  );
}

/** Refusal under the `reject` strategy: names the holder and when its lease expires. */
export function sessionBusy(sessionId: string, holder: SessionExecutionLease): TetherError {
  return new TetherError(
    "session_busy",
    `session ${sessionId} is running a turn on ${holder.owner.ownerId} (lease expires at ${new Date(holder.expiresAtMs).toISOString()})`,
    { fields: { sessionId, holder: holder.owner.ownerId, expiresAtMs: holder.expiresAtMs } },
  );
}

/** Refusal under the `reject` strategy while a turn is parked (it holds no lease). */
export function sessionParked(sessionId: string, turnId: string): TetherError {
  return new TetherError(
    "session_busy",
    `session ${sessionId} has turn ${turnId} parked, waiting for tool results or approvals`,
    { fields: { sessionId, turnId } },
  );
}
