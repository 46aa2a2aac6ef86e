// Content hashes for source-key idempotency: equal drafts hash equal across backends.
import { createHash } from "node:crypto";
import type { TurnInputDraft } from "../../domain/inputs.js";
import type { QueuedWorkDraft } from "../../domain/queue.js";

function sha256(parts: readonly string[]): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(`${part.length}:${part};`);
  return hash.digest("hex");
}

export function queuedWorkHash(d: QueuedWorkDraft): string {
  return sha256([d.workClass, d.deliveryPolicy, d.slotPolicy, d.mergeKey ?? "", d.payload]);
}

/**
 * An input's content: its payload, not its delivery. A retry under the same source key may find
 * the session in another state (the turn a steered input joined has ended), so it offers the
 * same content delivered otherwise: that is still the same input, and gets the stored one.
 */
export function turnInputHash(d: TurnInputDraft): string {
  // "next" as before the delivery left the hash: a next-turn input's key stored then still matches.
  return sha256(["next", d.payload]);
}
