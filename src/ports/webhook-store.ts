// The webhook port (ADR 0021): per-session outboxes (written by the commit and park steps of the
// RuntimeStore, or by enqueueWebhookEvent), leased claims of their rows, per-tenant endpoints
// and their delivery logs. Each operation is one atomic step (one Lua script on Redis).
import type { OutboxId } from "../domain/ids.js";
import type {
  OutboxBatchDeliveries,
  OutboxBatchSettled,
  OutboxClaimReport,
  OutboxRowSettlement,
  OutboxSettlement,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointDraft,
  WebhookEndpointUpdate,
  WebhookEndpointsSince,
  WebhookEvent,
} from "../domain/webhooks.js";

export interface WebhookOutboxStore {
  /**
   * Adds an event to the outbox `outboxId` (a session's own, or another such as a schedule's: the event lives in its slot), owed to
   * `targets` or, when undefined, every endpoint that wants it. Idempotent by event id while the
   * row is pending: false when a row of that id is there already. The seam for events that do
   * not come from a commit or a park (a schedule pause, a replay).
   */
  enqueueWebhookEvent(
    outboxId: OutboxId,
    event: WebhookEvent,
    targets?: string[],
  ): Promise<boolean>;
  /**
   * Takes up to `max` due rows whose lease is free (never taken, or expired: a dead deliverer's
   * rows come back) for `leaseMs`, under the claim token `claimToken`.
   */
  claimOutbox(
    outboxId: OutboxId,
    claimToken: string,
    leaseMs: number,
    max: number,
  ): Promise<OutboxClaimReport>;
  /**
   * Settles a claimed row: `done` removes it, `retry` keeps it for the named targets, due later,
   * with one more attempt counted. False (nothing changed) when the token no longer holds it.
   */
  settleOutbox(
    outboxId: OutboxId,
    eventId: string,
    claimToken: string,
    settlement: OutboxSettlement,
  ): Promise<boolean>;
  /**
   * Settles every row of `settlements` that `claimToken` still holds, in one step (a deliverer's
   * batch); the others are left as they are.
   *
   * With `deliveries`, only where the store folds them (foldsDeliveries; refused elsewhere): the
   * batch's attempts are recorded in the same step, after the rows are checked, each as
   * recordDelivery records it, whether or not the token still holds its row (an attempt that
   * happened is logged). A retried row is then owed only to its targets that still exist and are
   * not disabled; none left, it is done. The rows settled and the endpoints the records disabled.
   */
  settleOutboxBatch(
    outboxId: OutboxId,
    claimToken: string,
    settlements: OutboxRowSettlement[],
    deliveries?: OutboxBatchDeliveries,
  ): Promise<OutboxBatchSettled>;
  /** Outboxes that may have due rows (a hint, in its own slot), up to `limit`. */
  dueOutboxes(limit: number): Promise<OutboxId[]>;
  /**
   * Makes the outbox due in the hint index no later than `dueAtMs`: adds it, or moves it earlier,
   * never later (a writer notes before and after its write; see ADR 0021 "The hint").
   */
  noteOutbox(outboxId: OutboxId, dueAtMs: number): Promise<void>;
  /**
   * Before a write of an outbox row: the outbox becomes due at `dueAtMs` (a delivery lease
   * ahead) if it was due by `nowMs` or absent, or moves earlier to it. The writer's note after
   * its write makes it due now; a writer lost in between leaves its row found at `dueAtMs`.
   */
  expectOutbox(outboxId: OutboxId, nowMs: number, dueAtMs: number): Promise<void>;
  /**
   * After a deliverer's look at the outbox that began at `seenAtMs`: due again at `nextDueAtMs`,
   * or dropped when that is undefined (and added back if rows came meanwhile). A note made due
   * later than `seenAtMs` was written after the look began and stands (moved earlier if
   * `nextDueAtMs` is earlier), so a row its writer has not written yet is never forgotten.
   */
  settleOutboxHint(outboxId: OutboxId, seenAtMs: number, nextDueAtMs?: number): Promise<void>;
}

export interface WebhookEndpointStore {
  /**
   * Undefined when the id is taken (the existing endpoint is left as it is). With `maxEndpoints`
   * (ADR 0029), a tenant holding that many already is refused quota_exhausted, in the same step.
   */
  createEndpoint(
    draft: WebhookEndpointDraft,
    maxEndpoints?: number,
  ): Promise<WebhookEndpoint | undefined>;
  getEndpoint(tenant: string, endpointId: string): Promise<WebhookEndpoint | undefined>;
  /** Every endpoint of the tenant, by id. */
  listEndpoints(tenant: string): Promise<WebhookEndpoint[]>;
  /**
   * The tenant's endpoints version, moved by every create, update, delete and disable, and (by
   * id) every endpoint when it differs from `knownVersion`: a deliverer's cache check.
   */
  endpointsSince(tenant: string, knownVersion?: number): Promise<WebhookEndpointsSince>;
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

export interface WebhookStore extends WebhookOutboxStore, WebhookEndpointStore {
  /**
   * Whether settleOutboxBatch takes the batch's delivery records (memory, a standalone or
   * Sentinel Redis). Not on Cluster: a tenant's endpoints and logs live in another slot than the
   * outbox, and a deliverer records each attempt with recordDelivery.
   */
  readonly foldsDeliveries?: boolean;
  /**
   * Whether the hint index is kept in the outbox's own steps (memory, a standalone or Sentinel
   * Redis; ADR 0021 "The hint dropped in the settle"): every write of outbox rows (a commit, a
   * park, enqueueWebhookEvent) lists the outbox in it in the same step, and a settleOutboxBatch
   * that leaves the outbox empty drops it in its step. Not on Cluster: the index is in another
   * slot, writers expect and note it in separate steps, and only a look drops it.
   */
  readonly keepsOutboxHint?: boolean;
}
