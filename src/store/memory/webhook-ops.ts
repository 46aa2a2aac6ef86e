// Webhooks of the memory store (ADR 0021): outbox rows per session, written inside the session's
// serialized step by commit and park (writeOutboxRow), and the tenant's endpoints and logs.
import type { SessionId } from "../../domain/ids.js";
import {
  WEBHOOK_DELIVERY_LOG_LIMIT,
  type OutboxClaim,
  type OutboxRow,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from "../../domain/webhooks.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import { atomically, type MemoryContext } from "./context.js";

interface StoredRow extends OutboxRow {
  claimToken: string | undefined;
  leaseUntilMs: number;
}

export interface MemoryWebhooks {
  /** Outbox rows by outbox (session) id, then event id. They outlive a deleted session. */
  outboxes: Map<SessionId, Map<string, StoredRow>>;
  /** The hint index: outbox id -> due ms. */
  due: Map<SessionId, number>;
  endpoints: Map<string, Map<string, WebhookEndpoint>>;
  /** By `<tenant>\n<endpoint id>`, newest first. */
  deliveries: Map<string, WebhookDelivery[]>;
}

export function emptyWebhooks(): MemoryWebhooks {
  return { outboxes: new Map(), due: new Map(), endpoints: new Map(), deliveries: new Map() };
}

/** Call only inside the outbox's serialized step; false when the event's row is there already. */
export function writeOutboxRow(
  webhooks: MemoryWebhooks,
  outboxId: SessionId,
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

const copyEndpoint = (e: WebhookEndpoint): WebhookEndpoint => structuredClone(e);
const logKey = (tenant: string, endpointId: string) => `${tenant}\n${endpointId}`;

function outboxOps(ctx: MemoryContext, w: MemoryWebhooks) {
  return {
    enqueueWebhookEvent: (outboxId: SessionId, event: WebhookEvent, targets?: string[]) =>
      atomically(ctx, outboxId, (_cell, nowMs) =>
        writeOutboxRow(w, outboxId, event, targets, nowMs),
      ),
    claimOutbox: (outboxId: SessionId, claimToken: string, leaseMs: number, max: number) =>
      atomically(ctx, outboxId, (_cell, nowMs) => {
        const rows = w.outboxes.get(outboxId) ?? new Map<string, StoredRow>();
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
      }),
    settleOutbox: (
      outboxId: SessionId,
      eventId: string,
      claimToken: string,
      settlement: Parameters<WebhookStore["settleOutbox"]>[3],
    ) =>
      atomically(ctx, outboxId, () => {
        const rows = w.outboxes.get(outboxId);
        const row = rows?.get(eventId);
        if (!rows || row?.claimToken !== claimToken) return false;
        if (settlement.kind === "done") {
          rows.delete(eventId);
          if (rows.size === 0) w.outboxes.delete(outboxId);
          return true;
        }
        row.attempts += 1;
        row.dueAtMs = settlement.dueAtMs;
        row.targets = [...settlement.targets];
        row.claimToken = undefined;
        row.leaseUntilMs = 0;
        return true;
      }),
    dueOutboxes: (limit: number) => {
      const now = ctx.clock.nowMs();
      const due = [...w.due].filter(([, at]) => at <= now).sort((a, b) => a[1] - b[1]);
      return Promise.resolve(due.slice(0, limit).map(([id]) => id));
    },
    noteOutbox: (outboxId: SessionId, dueAtMs: number) => {
      w.due.set(outboxId, dueAtMs);
      return Promise.resolve();
    },
    forgetOutbox: (outboxId: SessionId) =>
      atomically(ctx, outboxId, () => {
        if ((w.outboxes.get(outboxId)?.size ?? 0) === 0) w.due.delete(outboxId);
      }),
  };
}

function endpointOps(w: MemoryWebhooks): Omit<WebhookStore, keyof ReturnType<typeof outboxOps>> {
  const tenantMap = (tenant: string) => {
    let map = w.endpoints.get(tenant);
    if (!map) w.endpoints.set(tenant, (map = new Map()));
    return map;
  };
  return {
    createEndpoint(draft) {
      const map = tenantMap(draft.tenant);
      if (map.has(draft.endpointId)) return Promise.resolve(undefined);
      const endpoint = { ...draft, disabled: false, disabledReason: "", consecutiveFailures: 0 };
      map.set(draft.endpointId, copyEndpoint(endpoint));
      return Promise.resolve(copyEndpoint(endpoint));
    },
    getEndpoint(tenant, endpointId) {
      const found = w.endpoints.get(tenant)?.get(endpointId);
      return Promise.resolve(found && copyEndpoint(found));
    },
    listEndpoints(tenant) {
      const all = [...(w.endpoints.get(tenant)?.values() ?? [])];
      all.sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
      return Promise.resolve(all.map(copyEndpoint));
    },
    updateEndpoint(update) {
      const found = w.endpoints.get(update.tenant)?.get(update.endpointId);
      if (!found) return Promise.resolve(undefined);
      if (update.url !== undefined) found.url = update.url;
      if (update.eventTypes !== undefined) found.eventTypes = [...update.eventTypes];
      if (update.secret !== undefined) found.secret = update.secret;
      if (update.disabled === false) {
        Object.assign(found, { disabled: false, disabledReason: "", consecutiveFailures: 0 });
      } else if (update.disabled === true && !found.disabled) {
        Object.assign(found, { disabled: true, disabledReason: "disabled by request" });
      }
      return Promise.resolve(copyEndpoint(found));
    },
    deleteEndpoint(tenant, endpointId) {
      w.deliveries.delete(logKey(tenant, endpointId));
      return Promise.resolve(w.endpoints.get(tenant)?.delete(endpointId) ?? false);
    },
    recordDelivery(tenant, delivery, failureLimit) {
      const found = w.endpoints.get(tenant)?.get(delivery.endpointId);
      if (!found) return Promise.resolve(undefined);
      const key = logKey(tenant, delivery.endpointId);
      const log = [{ ...delivery }, ...(w.deliveries.get(key) ?? [])];
      w.deliveries.set(key, log.slice(0, WEBHOOK_DELIVERY_LOG_LIMIT));
      found.consecutiveFailures = delivery.ok ? 0 : found.consecutiveFailures + 1;
      if (!found.disabled && found.consecutiveFailures >= failureLimit) {
        found.disabled = true;
        found.disabledReason = `${found.consecutiveFailures} consecutive failed deliveries`;
      }
      return Promise.resolve(copyEndpoint(found));
    },
    listDeliveries(tenant, endpointId, options) {
      const log = w.deliveries.get(logKey(tenant, endpointId)) ?? [];
      const from = options.cursor === undefined ? 0 : Number(options.cursor);
      const page = log.slice(from, from + options.limit).map((d) => ({ ...d }));
      const next = from + page.length;
      return Promise.resolve({
        deliveries: page,
        nextCursor: next < log.length ? String(next) : undefined,
      });
    },
  };
}

export function createMemoryWebhookStore(ctx: MemoryContext, w: MemoryWebhooks): WebhookStore {
  return { ...outboxOps(ctx, w), ...endpointOps(w) };
}
