// The webhook store's one input check (as checked-store.ts is the runtime store's): ids, counts
// and leases are validated here, once, with the same typed error on every backend.
import { checkId, parseSessionId } from "../../domain/ids.js";
import { parseWebhookEventTypes, type WebhookEvent } from "../../domain/webhooks.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import { checkCount } from "./validate.js";

/** A rejected promise, never a synchronous throw (callers chain and Promise.all). */
function checked<R>(check: () => void, run: () => Promise<R>): Promise<R> {
  try {
    check();
  } catch (error) {
    return Promise.reject(error);
  }
  return run();
}

function checkEvent(event: WebhookEvent): void {
  checkId("event.id", event?.id);
  parseWebhookEventTypes([event.type], "event.type");
}

const MAX_LEASE_MS = 24 * 60 * 60 * 1000;

export function withWebhookChecks(inner: WebhookStore): WebhookStore {
  const tenant = (t: string) => checkId("tenant", t);
  const endpoint = (id: string) => checkId("endpoint_id", id);
  return {
    ...inner,
    enqueueWebhookEvent: (outboxId, event, targets) =>
      checked(
        () => {
          parseSessionId(outboxId, "outbox_id");
          checkEvent(event);
          for (const t of targets ?? []) endpoint(t);
        },
        () => inner.enqueueWebhookEvent(outboxId, event, targets),
      ),
    claimOutbox: (outboxId, token, leaseMs, max) =>
      checked(
        () => {
          parseSessionId(outboxId, "outbox_id");
          checkId("claim_token", token);
          checkCount("lease_ms", leaseMs, 1, MAX_LEASE_MS);
          checkCount("max", max, 1, 1000);
        },
        () => inner.claimOutbox(outboxId, token, leaseMs, max),
      ),
    settleOutbox: (outboxId, eventId, token, settlement) =>
      checked(
        () => {
          parseSessionId(outboxId, "outbox_id");
          checkId("event_id", eventId);
          checkId("claim_token", token);
          if (settlement.kind === "retry") {
            checkCount("due_at_ms", settlement.dueAtMs, 0);
            for (const t of settlement.targets) endpoint(t);
          }
        },
        () => inner.settleOutbox(outboxId, eventId, token, settlement),
      ),
    noteOutbox: (outboxId, dueAtMs) =>
      checked(
        () => {
          parseSessionId(outboxId, "outbox_id");
          checkCount("due_at_ms", dueAtMs, 0);
        },
        () => inner.noteOutbox(outboxId, dueAtMs),
      ),
    expectOutbox: (outboxId, nowMs, dueAtMs) =>
      checked(
        () => {
          parseSessionId(outboxId, "outbox_id");
          checkCount("now_ms", nowMs, 0);
          checkCount("due_at_ms", dueAtMs, 0);
        },
        () => inner.expectOutbox(outboxId, nowMs, dueAtMs),
      ),
    settleOutboxHint: (outboxId, seenAtMs, nextDueAtMs) =>
      checked(
        () => {
          parseSessionId(outboxId, "outbox_id");
          checkCount("seen_at_ms", seenAtMs, 0);
          if (nextDueAtMs !== undefined) checkCount("next_due_at_ms", nextDueAtMs, 0);
        },
        () => inner.settleOutboxHint(outboxId, seenAtMs, nextDueAtMs),
      ),
    dueOutboxes: (limit) =>
      checked(
        () => checkCount("limit", limit, 1, 10_000),
        () => inner.dueOutboxes(limit),
      ),
    createEndpoint: (draft, maxEndpoints) =>
      checked(
        () => {
          tenant(draft?.tenant);
          endpoint(draft.endpointId);
          parseWebhookEventTypes(draft.eventTypes, "event_types");
          if (maxEndpoints !== undefined) checkCount("max_endpoints", maxEndpoints, 1);
        },
        () => inner.createEndpoint(draft, maxEndpoints),
      ),
    getEndpoint: (t, id) =>
      checked(
        () => {
          tenant(t);
          endpoint(id);
        },
        () => inner.getEndpoint(t, id),
      ),
    listEndpoints: (t) =>
      checked(
        () => tenant(t),
        () => inner.listEndpoints(t),
      ),
    updateEndpoint: (update) =>
      checked(
        () => {
          tenant(update?.tenant);
          endpoint(update.endpointId);
          if (update.eventTypes) parseWebhookEventTypes(update.eventTypes, "event_types");
        },
        () => inner.updateEndpoint(update),
      ),
    deleteEndpoint: (t, id) =>
      checked(
        () => {
          tenant(t);
          endpoint(id);
        },
        () => inner.deleteEndpoint(t, id),
      ),
    recordDelivery: (t, delivery, limit) =>
      checked(
        () => {
          tenant(t);
          endpoint(delivery?.endpointId);
          checkCount("failure_limit", limit, 1, 1_000_000);
        },
        () => inner.recordDelivery(t, delivery, limit),
      ),
    listDeliveries: (t, id, options) =>
      checked(
        () => {
          tenant(t);
          endpoint(id);
          checkCount("limit", options?.limit, 1, 10_000);
          if (options.cursor !== undefined) checkCount("cursor", Number(options.cursor), 0);
        },
        () => inner.listDeliveries(t, id, options),
      ),
  };
}
