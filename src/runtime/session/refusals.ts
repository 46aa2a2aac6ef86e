// Why a call about a session is refused: the replica closing (its drain), and a busy session
// under the `reject` strategy. Typed errors the API maps to gRPC codes (ADR 0003).
import { TetherError } from "../../domain/errors.js";
import type { SessionExecutionLease } from "../../domain/lease.js";

/**
 * The replica is closing (its drain began): one code for every refusal it makes, the one the
 * server's own shutdown uses, server_shutting_down (UNAVAILABLE: another replica takes the call).
 * It was store_unavailable here once, which told a client the store was away when it was not. A
 * `stream` it ends, the client resumes from its last cursor elsewhere; a `turn` it refuses was
 * never stored.
 */
export function replicaClosing(what: "stream" | "turn"): TetherError {
  return new TetherError(
    "server_shutting_down",
    what === "stream"
      ? "the server is shutting down: resume from the last cursor on another replica"
      : "the server is shutting down",
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
