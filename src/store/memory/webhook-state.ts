// The memory store's webhook state (ADR 0021), apart from the operations so the store's context
// can hold it without an import cycle: outbox rows per session and the tenants' endpoints.
import type { OutboxId } from "../../domain/ids.js";
import type {
  OutboxRow,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
} from "../../domain/webhooks.js";

export interface StoredRow extends OutboxRow {
  claimToken: string | undefined;
  leaseUntilMs: number;
}

export interface MemoryWebhooks {
  /** Outbox rows by outbox (session) id, then event id. They outlive a deleted session. */
  outboxes: Map<OutboxId, Map<string, StoredRow>>;
  /** The hint index: outbox id -> due ms. */
  due: Map<OutboxId, number>;
  endpoints: Map<string, Map<string, WebhookEndpoint>>;
  /** Per tenant: moved by every change of its endpoints (deliverers' cache check). */
  endpointVersions: Map<string, number>;
  /** By `<tenant>\n<endpoint id>`, newest first. */
  deliveries: Map<string, WebhookDelivery[]>;
}

export function emptyWebhooks(): MemoryWebhooks {
  return {
    outboxes: new Map(),
    due: new Map(),
    endpoints: new Map(),
    endpointVersions: new Map(),
    deliveries: new Map(),
  };
}

/** Call only inside the outbox's serialized step; false when the event's row is there already. */
export function writeOutboxRow(
  webhooks: MemoryWebhooks,
  outboxId: OutboxId,
  event: WebhookEvent,
  targets: string[] | undefined,
  nowMs: number,
): boolean {
  let rows = webhooks.outboxes.get(outboxId);
  if (!rows) webhooks.outboxes.set(outboxId, (rows = new Map()));
  if (rows.has(event.id)) return false;
  rows.set(event.id, {
    event: structuredClone(event),
    attempts: 0,
    dueAtMs: nowMs,
    targets: targets && [...targets],
    claimToken: undefined,
    leaseUntilMs: 0,
  });
  return true;
}
