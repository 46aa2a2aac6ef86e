// Webhooks of the memory store (ADR 0021): outbox rows per session, written inside the session's
// serialized step by commit and park (writeOutboxRow), and the tenant's endpoints and logs.
import { storageQuotaExhausted } from "../../domain/storage-quotas.js";
import type { OutboxId, SessionId } from "../../domain/ids.js";
import {
  WEBHOOK_DELIVERY_LOG_LIMIT,
  type OutboxBatchDeliveries,
  type OutboxBatchSettled,
  type OutboxRowSettlement,
  type WebhookEndpoint,
  type WebhookEvent,
} from "../../domain/webhooks.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import { withChecks } from "../shared/checked.js";
import { webhookChecks } from "../shared/webhook-checks.js";
import { atomically, type MemoryContext } from "./context.js";
import {
  applyDelivery,
  claimRows,
  expectHint,
  hintWrittenRow,
  settleHint,
  writeOutboxRow,
  type MemoryWebhooks,
} from "./webhook-state.js";

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
      atomically(ctx, stepOf(outboxId), (_cell, nowMs) => {
        const written = writeOutboxRow(w, outboxId, event, targets, nowMs);
        // Listed with the row (ADR 0021 "The hint dropped in the settle"), due at once.
        hintWrittenRow(w, outboxId, undefined, nowMs);
        return written;
      }),
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
      settlements: OutboxRowSettlement[],
      deliveries?: OutboxBatchDeliveries,
    ) =>
      atomically(ctx, stepOf(outboxId), (): OutboxBatchSettled => {
        const rows = w.outboxes.get(outboxId);
        // The rows checked first; then the attempts recorded, whoever holds their rows.
        const held = settlements.flatMap(({ eventId, settlement }) => {
          const row = rows?.get(eventId);
          return row && row.claimToken === claimToken ? [{ eventId, row, settlement }] : [];
        });
        const disabled: OutboxBatchSettled["disabled"] = [];
        for (const d of deliveries?.deliveries ?? []) {
          const { tenant, failureLimit } = deliveries as OutboxBatchDeliveries;
          const after = applyDelivery(w, tenant, d, failureLimit, WEBHOOK_DELIVERY_LOG_LIMIT);
          if (after?.disabledNow) {
            disabled.push({ endpointId: d.endpointId, reason: after.endpoint.disabledReason });
          }
        }
        // With the records: a retried row is owed only to endpoints still there and enabled.
        const endpoints = deliveries && w.endpoints.get(deliveries.tenant);
        const owedBy = (targets: string[]) =>
          deliveries ? targets.filter((id) => endpoints?.get(id)?.disabled === false) : targets;
        for (const { eventId, row, settlement } of held) {
          const owed = settlement.kind === "retry" ? owedBy(settlement.targets) : [];
          if (settlement.kind === "done" || (deliveries && owed.length === 0)) {
            rows?.delete(eventId);
            continue;
          }
          row.attempts += 1;
          row.dueAtMs = settlement.dueAtMs;
          row.targets = [...owed];
          row.claimToken = undefined;
          row.leaseUntilMs = 0;
        }
        settleHint(w, outboxId);
        return { settled: held.length, disabled };
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
      const after = applyDelivery(w, tenant, delivery, failureLimit, WEBHOOK_DELIVERY_LOG_LIMIT);
      return Promise.resolve(after && copyEndpoint(after.endpoint));
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
  return withChecks(webhookChecks, {
    ...outboxOps(ctx, w),
    ...endpointOps(w),
    foldsDeliveries: true,
    keepsOutboxHint: true,
  });
}
