// The webhook port (ADR 0021): per-session outboxes (written by the commit and park steps of the
// RuntimeStore, or by enqueueWebhookEvent), leased claims of their rows, per-tenant endpoints
// and their delivery logs. Each operation is one atomic step (one Lua script on Redis).
import type { SessionId } from "../domain/ids.js";
import type {
  OutboxClaimReport,
  OutboxSettlement,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointDraft,
  WebhookEndpointUpdate,
  WebhookEvent,
} from "../domain/webhooks.js";

export interface WebhookOutboxStore {
  /**
   * Adds an event to the outbox `outboxId` (a session id: the event lives in its slot), owed to
   * `targets` or, when undefined, every endpoint that wants it. Idempotent by event id while the
   * row is pending: false when a row of that id is there already. The seam for events that do
   * not come from a commit or a park (a schedule pause, a replay).
   */
  enqueueWebhookEvent(
    outboxId: SessionId,
    event: WebhookEvent,
    targets?: string[],
  ): Promise<boolean>;
  /**
   * Takes up to `max` due rows whose lease is free (never taken, or expired: a dead deliverer's
   * rows come back) for `leaseMs`, under the claim token `claimToken`.
   */
  claimOutbox(
    outboxId: SessionId,
    claimToken: string,
    leaseMs: number,
    max: number,
  ): Promise<OutboxClaimReport>;
  /**
   * Settles a claimed row: `done` removes it, `retry` keeps it for the named targets, due later,
   * with one more attempt counted. False (nothing changed) when the token no longer holds it.
   */
  settleOutbox(
    outboxId: SessionId,
    eventId: string,
    claimToken: string,
    settlement: OutboxSettlement,
  ): Promise<boolean>;
  /** Outboxes that may have due rows (a hint, in its own slot), up to `limit`. */
  dueOutboxes(limit: number): Promise<SessionId[]>;
  /** Adds or moves an outbox in the hint index (after a commit or park that wrote an event). */
  noteOutbox(outboxId: SessionId, dueAtMs: number): Promise<void>;
  /** Drops an outbox from the hint index, then adds it back if rows came meanwhile. */
  forgetOutbox(outboxId: SessionId): Promise<void>;
}

export interface WebhookEndpointStore {
  /** Undefined when the id is taken (the existing endpoint is left as it is). */
  createEndpoint(draft: WebhookEndpointDraft): Promise<WebhookEndpoint | undefined>;
  getEndpoint(tenant: string, endpointId: string): Promise<WebhookEndpoint | undefined>;
  /** Every endpoint of the tenant, by id. */
  listEndpoints(tenant: string): Promise<WebhookEndpoint[]>;
  /** Undefined when there is no such endpoint. */
  updateEndpoint(update: WebhookEndpointUpdate): Promise<WebhookEndpoint | undefined>;
  /** Removes the endpoint and its delivery log; false when there was none. */
  deleteEndpoint(tenant: string, endpointId: string): Promise<boolean>;
  /**
   * Logs one attempt and counts it: a success resets the endpoint's consecutive failures, a
   * failure adds one and, at `failureLimit`, disables it with a reason. The endpoint after, or
   * undefined when it was deleted meanwhile (the attempt is then not logged).
   */
  recordDelivery(
    tenant: string,
    delivery: WebhookDelivery,
    failureLimit: number,
  ): Promise<WebhookEndpoint | undefined>;
  /** Newest first; `cursor` is the previous page's nextCursor. */
  listDeliveries(
    tenant: string,
    endpointId: string,
    options: { cursor?: string; limit: number },
  ): Promise<WebhookDeliveryPage>;
}

export interface WebhookStore extends WebhookOutboxStore, WebhookEndpointStore {}
