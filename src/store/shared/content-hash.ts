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

export function turnInputHash(d: TurnInputDraft): string {
  const delivery =
    d.delivery.kind === "active_turn"
      ? `active:${d.delivery.turnId}:${d.delivery.minBoundary}`
      : "next";
  return sha256([delivery, d.payload]);
}
