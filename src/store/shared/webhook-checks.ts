// The webhook store's check table (ADR 0034): ids, counts and leases are validated by
// `withChecks`, once, with the same typed error on every backend.
import { checkId, parseOutboxId } from "../../domain/ids.js";
import { parseWebhookEventTypes, type WebhookEvent } from "../../domain/webhooks.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import type { CheckTable } from "./checked.js";
import { checkCount } from "./validate.js";

function checkEvent(event: WebhookEvent): void {
  checkId("event.id", event?.id);
  parseWebhookEventTypes([event.type], "event.type");
}

const MAX_LEASE_MS = 24 * 60 * 60 * 1000;
/** A batch's attempts: its rows (at most 1000) times the endpoints each was sent to. */
const MAX_BATCH_DELIVERIES = 100_000;

const tenant = (t: string) => checkId("tenant", t);
const endpoint = (id: string) => checkId("endpoint_id", id);
const outbox = (id: string) => parseOutboxId(id);

export const webhookChecks = {
  enqueueWebhookEvent: (outboxId, event, targets) => {
    outbox(outboxId);
    checkEvent(event);
    for (const t of targets ?? []) endpoint(t);
  },
  claimOutbox: (outboxId, token, leaseMs, max) => {
    outbox(outboxId);
    checkId("claim_token", token);
    checkCount("lease_ms", leaseMs, 1, MAX_LEASE_MS);
    checkCount("max", max, 1, 1000);
  },
  settleOutbox: (outboxId, eventId, token, settlement) => {
    outbox(outboxId);
    checkId("event_id", eventId);
    checkId("claim_token", token);
    if (settlement.kind === "retry") {
      checkCount("due_at_ms", settlement.dueAtMs, 0);
      for (const t of settlement.targets) endpoint(t);
    }
  },
  settleOutboxBatch: (outboxId, token, settlements, deliveries) => {
    outbox(outboxId);
    checkId("claim_token", token);
    checkCount("settlements", settlements?.length, 0, 1000);
    for (const { eventId, settlement } of settlements) {
      checkId("event_id", eventId);
      if (settlement.kind === "retry") {
        checkCount("due_at_ms", settlement.dueAtMs, 0);
        for (const t of settlement.targets) endpoint(t);
      }
    }
    if (deliveries === undefined) return;
    tenant(deliveries.tenant);
    checkCount("failure_limit", deliveries.failureLimit, 1, 1_000_000);
    checkCount("deliveries", deliveries.deliveries?.length, 0, MAX_BATCH_DELIVERIES);
    for (const d of deliveries.deliveries) endpoint(d?.endpointId);
  },
  noteOutbox: (outboxId, dueAtMs) => {
    outbox(outboxId);
    checkCount("due_at_ms", dueAtMs, 0);
  },
  expectOutbox: (outboxId, nowMs, dueAtMs) => {
    outbox(outboxId);
    checkCount("now_ms", nowMs, 0);
    checkCount("due_at_ms", dueAtMs, 0);
  },
  settleOutboxHint: (outboxId, seenAtMs, nextDueAtMs) => {
    outbox(outboxId);
    checkCount("seen_at_ms", seenAtMs, 0);
    if (nextDueAtMs !== undefined) checkCount("next_due_at_ms", nextDueAtMs, 0);
  },
  dueOutboxes: (limit) => checkCount("limit", limit, 1, 10_000),
  createEndpoint: (draft, maxEndpoints) => {
    tenant(draft?.tenant);
    endpoint(draft.endpointId);
    parseWebhookEventTypes(draft.eventTypes, "event_types");
    if (maxEndpoints !== undefined) checkCount("max_endpoints", maxEndpoints, 1);
  },
  getEndpoint: (t, id) => {
    tenant(t);
    endpoint(id);
  },
  listEndpoints: (t) => tenant(t),
  endpointsSince: (t, known) => {
    tenant(t);
    if (known !== undefined) checkCount("known_version", known, 0);
  },
  updateEndpoint: (update) => {
    tenant(update?.tenant);
    endpoint(update.endpointId);
    if (update.eventTypes) parseWebhookEventTypes(update.eventTypes, "event_types");
  },
  deleteEndpoint: (t, id) => {
    tenant(t);
    endpoint(id);
  },
  recordDelivery: (t, delivery, limit) => {
    tenant(t);
    endpoint(delivery?.endpointId);
    checkCount("failure_limit", limit, 1, 1_000_000);
  },
  listDeliveries: (t, id, options) => {
    tenant(t);
    endpoint(id);
    checkCount("limit", options?.limit, 1, 10_000);
    if (options.cursor !== undefined) checkCount("cursor", Number(options.cursor), 0);
  },
} satisfies CheckTable<WebhookStore>;
