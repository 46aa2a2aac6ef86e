// The memory store's webhook state (ADR 0021), apart from the operations so the store's context
// can hold it without an import cycle: outbox rows per session and the tenants' endpoints.
import type { OutboxId } from "../../domain/ids.js";
import type {
  OutboxClaim,
  OutboxClaimReport,
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

/**
 * The hint's expect (ADR 0021 "The hint"): due at `dueAtMs`, unless due later than the writer's
 * now and earlier than that already.
 */
export function expectHint(
  webhooks: MemoryWebhooks,
  outboxId: OutboxId,
  nowMs: number,
  dueAtMs: number,
): void {
  const current = webhooks.due.get(outboxId);
  if (current === undefined || current <= nowMs || dueAtMs < current) {
    webhooks.due.set(outboxId, dueAtMs);
  }
}

/**
 * The hint of a row just written (ADR 0021 "The hint dropped in the settle"): every write of
 * outbox rows lists the outbox in the same step, so a settle that empties the outbox may drop it.
 * With the writer's expect, as expectHint; without, due at once (moved earlier, never later).
 */
export function hintWrittenRow(
  webhooks: MemoryWebhooks,
  outboxId: OutboxId,
  expect: { nowMs: number; dueAtMs: number } | undefined,
  nowMs: number,
): void {
  if (expect) return expectHint(webhooks, outboxId, expect.nowMs, expect.dueAtMs);
  const current = webhooks.due.get(outboxId);
  if (current === undefined || nowMs < current) webhooks.due.set(outboxId, nowMs);
}

/**
 * A settle's hint (ADR 0021 "The hint dropped in the settle"): every write of a row lists the
 * outbox in its own step, so the settle sets it exactly: dropped with the outbox when empty,
 * else due when its first row is owed a look (due, and its lease free).
 */
export function settleHint(webhooks: MemoryWebhooks, outboxId: OutboxId): void {
  const rows = [...(webhooks.outboxes.get(outboxId)?.values() ?? [])];
  if (rows.length === 0) {
    webhooks.outboxes.delete(outboxId);
    webhooks.due.delete(outboxId);
    return;
  }
  webhooks.due.set(outboxId, Math.min(...rows.map((r) => Math.max(r.dueAtMs, r.leaseUntilMs))));
}

/** claimOutbox's step: up to `max` due rows whose lease is free, taken under `claimToken`. */
export function claimRows(
  webhooks: MemoryWebhooks,
  outboxId: OutboxId,
  claimToken: string,
  leaseMs: number,
  max: number,
  nowMs: number,
): OutboxClaimReport {
  const rows = webhooks.outboxes.get(outboxId) ?? new Map<string, StoredRow>();
  const claims: OutboxClaim[] = [];
  for (const row of rows.values()) {
    if (claims.length >= max) break;
    if (row.dueAtMs > nowMs || row.leaseUntilMs > nowMs) continue;
    row.claimToken = claimToken;
    row.leaseUntilMs = nowMs + leaseMs;
    const { event, attempts, dueAtMs, targets } = structuredClone(row);
    claims.push({
      row: { event, attempts, dueAtMs, targets },
      claimToken,
      leaseUntilMs: row.leaseUntilMs,
    });
  }
  return { claims, remaining: rows.size };
}

/**
 * recordDelivery's step (ADR 0021): logs the attempt and counts it; at `failureLimit` failures
 * in a row the endpoint is disabled and the tenant's version moves. The endpoint after (the
 * stored one: copy before handing it out) and whether this attempt disabled it; undefined when
 * there is no such endpoint (nothing logged).
 */
export function applyDelivery(
  w: MemoryWebhooks,
  tenant: string,
  delivery: WebhookDelivery,
  failureLimit: number,
  logLimit: number,
): { endpoint: WebhookEndpoint; disabledNow: boolean } | undefined {
  const found = w.endpoints.get(tenant)?.get(delivery.endpointId);
  if (!found) return undefined;
  const key = `${tenant}\n${delivery.endpointId}`;
  const log = [{ ...delivery }, ...(w.deliveries.get(key) ?? [])];
  w.deliveries.set(key, log.slice(0, logLimit));
  found.consecutiveFailures = delivery.ok ? 0 : found.consecutiveFailures + 1;
  const disabledNow = !found.disabled && found.consecutiveFailures >= failureLimit;
  if (disabledNow) {
    found.disabled = true;
    found.disabledReason = `${found.consecutiveFailures} consecutive failed deliveries`;
    w.endpointVersions.set(tenant, (w.endpointVersions.get(tenant) ?? 0) + 1);
  }
  return { endpoint: found, disabledNow };
}
