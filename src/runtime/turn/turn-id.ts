// Turn ids derived from what a turn consumes.
import type { SessionId } from "../../domain/ids.js";
import type { TurnInputClaim } from "../../domain/inputs.js";
import type { QueuedWorkClaim } from "../../domain/queue.js";
import { turnIdOfConsumed, turnIdOfInput } from "../../ports/turn-ids.js";

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

export { turnIdOfInput };
