// How a turn's id follows from what it consumes: the runtime names its turns by it, and a store
// that records a turn in its claim's step (domain/turn-records.ts) names the record the same way.
import { createHash } from "node:crypto";
import type { SessionId } from "../domain/ids.js";

/** `consumed`: `i:<input id>` per input, `w:<batch id>` per queued batch, in any order. */
export function turnIdOfConsumed(sessionId: SessionId, consumed: readonly string[]): string {
  const digest = createHash("sha256")
    .update(`${sessionId}\n${[...consumed].sort().join("\n")}`)
    .digest("hex");
  return `turn-${digest.slice(0, 24)}`;
}

/** The id of the turn that consumes exactly this input (an idle claim takes one at a time). */
export function turnIdOfInput(sessionId: SessionId, inputId: string): string {
  return turnIdOfConsumed(sessionId, [`i:${inputId}`]);
}
