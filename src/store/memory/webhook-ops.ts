// Webhooks of the memory store (ADR 0021): outbox rows per session, written inside the session's
// serialized step by commit and park (writeOutboxRow), and the tenant's endpoints and logs.
import { storageQuotaExhausted } from "../../domain/storage-quotas.js";
import type { OutboxId, SessionId } from "../../domain/ids.js";
import {
  WEBHOOK_DELIVERY_LOG_LIMIT,
  type WebhookEndpoint,
  type WebhookEvent,
} from "../../domain/webhooks.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import { withChecks } from "../shared/checked.js";
import { webhookChecks } from "../shared/webhook-checks.js";
import { atomically, type MemoryContext } from "./context.js";
import { claimRows, expectHint, writeOutboxRow, type MemoryWebhooks } from "./webhook-state.js";

export { emptyWebhooks, writeOutboxRow, type MemoryWebhooks } from "./webhook-state.js";

const copyEndpoint = (e: WebhookEndpoint): WebhookEndpoint => structuredClone(e);
const logKey = (tenant: string, endpointId: string) => `${tenant}\n${endpointId}`;

/**
 * An outbox's serialized step is the step of the session of its name: a commit writes its
 * session's outbox inside its own step, so the deliverer's claims and settles queue behind it.
 */
const stepOf = (outboxId: OutboxId): SessionId => outboxId as SessionId;

function outboxOps(ctx: MemoryContext, w: MemoryWebhooks) {
  return {
    enqueueWebhookEvent: (outboxId: OutboxId, event: WebhookEvent, targets?: string[]) =>
      atomically(ctx, stepOf(outboxId), (_cell, nowMs) =>
        writeOutboxRow(w, outboxId, event, targets, nowMs),
      ),
    claimOutbox: (outboxId: OutboxId, claimToken: string, leaseMs: number, max: number) =>
      atomically(ctx, stepOf(outboxId), (_cell, nowMs) =>
        claimRows(w, outboxId, claimToken, leaseMs, max, nowMs),
      ),
    settleOutbox: (
      outboxId: OutboxId,
      eventId: string,
      claimToken: string,
      settlement: Parameters<WebhookStore["settleOutbox"]>[3],
    ) =>
      atomically(ctx, stepOf(outboxId), () => {
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
    settleOutboxBatch: (
      outboxId: OutboxId,
      claimToken: string,
      settlements: Parameters<WebhookStore["settleOutboxBatch"]>[2],
    ) =>
      atomically(ctx, stepOf(outboxId), () => {
        const rows = w.outboxes.get(outboxId);
        let settled = 0;
        for (const { eventId, settlement } of settlements) {
          const row = rows?.get(eventId);
          if (!rows || !row || row.claimToken !== claimToken) continue;
          settled += 1;
          if (settlement.kind === "done") {
            rows.delete(eventId);
            continue;
          }
          row.attempts += 1;
          row.dueAtMs = settlement.dueAtMs;
          row.targets = [...settlement.targets];
          row.claimToken = undefined;
          row.leaseUntilMs = 0;
        }
        if (rows?.size === 0) w.outboxes.delete(outboxId);
        return settled;
      }),
    dueOutboxes: (limit: number) => {
      const now = ctx.clock.nowMs();
      const due = [...w.due].filter(([, at]) => at <= now).sort((a, b) => a[1] - b[1]);
      return Promise.resolve(due.slice(0, limit).map(([id]) => id));
    },
    noteOutbox: (outboxId: OutboxId, dueAtMs: number) => {
      const current = w.due.get(outboxId);
      if (current === undefined || dueAtMs < current) w.due.set(outboxId, dueAtMs);
      return Promise.resolve();
    },
    expectOutbox: (outboxId: OutboxId, nowMs: number, dueAtMs: number) => {
      expectHint(w, outboxId, nowMs, dueAtMs);
      return Promise.resolve();
    },
    settleOutboxHint: (outboxId: OutboxId, seenAtMs: number, nextDueAtMs?: number) =>
      atomically(ctx, stepOf(outboxId), () => {
        const current = w.due.get(outboxId);
        // Noted after the look began: it stands (ADR 0021 "The hint").
        if (current !== undefined && current > seenAtMs) {
          if (nextDueAtMs !== undefined && nextDueAtMs < current) w.due.set(outboxId, nextDueAtMs);
        } else if (nextDueAtMs !== undefined) {
          w.due.set(outboxId, nextDueAtMs);
        } else if ((w.outboxes.get(outboxId)?.size ?? 0) === 0) {
          w.due.delete(outboxId);
        } else {
          w.due.set(outboxId, 0);
        }
      }),
  };
}

function endpointOps(w: MemoryWebhooks): Omit<WebhookStore, keyof ReturnType<typeof outboxOps>> {
  const tenantMap = (tenant: string) => {
    let map = w.endpoints.get(tenant);
    if (!map) w.endpoints.set(tenant, (map = new Map()));
    return map;
  };
  const moved = (tenant: string) =>
    w.endpointVersions.set(tenant, (w.endpointVersions.get(tenant) ?? 0) + 1);
  return {
    createEndpoint(draft, maxEndpoints) {
      const map = tenantMap(draft.tenant);
      if (map.has(draft.endpointId)) return Promise.resolve(undefined);
      if (maxEndpoints !== undefined && map.size >= maxEndpoints) {
        return Promise.reject(
          storageQuotaExhausted(draft.tenant, "webhook_endpoints", maxEndpoints),
        );
      }
      const endpoint = { ...draft, disabled: false, disabledReason: "", consecutiveFailures: 0 };
      map.set(draft.endpointId, copyEndpoint(endpoint));
      moved(draft.tenant);
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
    endpointsSince(tenant, knownVersion) {
      const version = w.endpointVersions.get(tenant) ?? 0;
      if (version === knownVersion) return Promise.resolve({ version });
      const all = [...(w.endpoints.get(tenant)?.values() ?? [])];
      all.sort((x, y) => (x.endpointId < y.endpointId ? -1 : 1));
      return Promise.resolve({ version, endpoints: all.map(copyEndpoint) });
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
      moved(update.tenant);
      return Promise.resolve(copyEndpoint(found));
    },
    deleteEndpoint(tenant, endpointId) {
      w.deliveries.delete(logKey(tenant, endpointId));
      const deleted = w.endpoints.get(tenant)?.delete(endpointId) ?? false;
      if (deleted) moved(tenant);
      return Promise.resolve(deleted);
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
        moved(tenant);
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
  return withChecks(webhookChecks, { ...outboxOps(ctx, w), ...endpointOps(w) });
}
