// Turn ids derived from what a turn consumes.
import { createHash } from "node:crypto";
import type { SessionId } from "../../domain/ids.js";
import type { TurnInputClaim } from "../../domain/inputs.js";
import type { QueuedWorkClaim } from "../../domain/queue.js";

/**
 * A turn's id follows from what it consumes, so a re-run after a crash (a successor re-claiming
 * the same inputs) is the same turn: tool idempotency keys and steer targets stay valid.
 */
export function stableTurnId(
  sessionId: SessionId,
  job: { inputs: TurnInputClaim | undefined; work: QueuedWorkClaim | undefined },
): string {
  return turnIdOfConsumed(sessionId, [
    ...(job.inputs?.inputs ?? []).map((i) => `i:${i.inputId}`),
    ...(job.work?.batches ?? []).map((b) => `w:${b.batchId}`),
  ]);
}

/** The id of the turn that consumes exactly this input (a turn start's claim, ADR 0024). */
export function turnIdOfInput(sessionId: SessionId, inputId: string): string {
  return turnIdOfConsumed(sessionId, [`i:${inputId}`]);
}

function turnIdOfConsumed(sessionId: SessionId, consumed: string[]): string {
  const digest = createHash("sha256")
    .update(`${sessionId}\n${consumed.sort().join("\n")}`)
    .digest("hex");
  return `turn-${digest.slice(0, 24)}`;
}
