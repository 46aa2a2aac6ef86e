// Webhooks (ADR 0021): lifecycle events written to an outbox in the same atomic step as the state
// change they report, then delivered at least once, signed the Standard Webhooks way, to every
// endpoint of the tenant that asks for the event's type.
import { invalidArgument } from "./errors.js";

export const WEBHOOK_EVENT_TYPES = [
  "turn.completed",
  "turn.failed",
  "turn.cancelled",
  "session.action_required",
  "schedule.paused",
  "session.budget_reached",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * A thin event: ids only, so a receiver re-reads state through the API and a late retry never
 * carries stale state. `id` is the `webhook-id` of every delivery attempt of it, to every endpoint.
 */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  createdAtMs: number;
  /** Ids and short codes: session_id, turn_id, call_ids, outcome, reason... */
  data: Record<string, string | string[]>;
}

/** An outbox row: one event and how far its delivery got. */
export interface OutboxRow {
  event: WebhookEvent;
  /** Delivery rounds tried so far (0 before the first). */
  attempts: number;
  /** Not before (store clock, ms). */
  dueAtMs: number;
  /** Endpoint ids still owed the event; undefined: every endpoint of the tenant that wants it. */
  targets: string[] | undefined;
}

/** An outbox row taken by one deliverer until `leaseUntilMs`; only its token settles it. */
export interface OutboxClaim {
  row: OutboxRow;
  claimToken: string;
  leaseUntilMs: number;
}

export interface OutboxClaimReport {
  claims: OutboxClaim[];
  /** Rows left in the outbox after the claim (claimed ones included). */
  remaining: number;
}

/** What a deliverer settles a claimed row with: delivered everywhere, or try again later. */
export type OutboxSettlement =
  { kind: "done" } | { kind: "retry"; dueAtMs: number; targets: string[] };

/** One row's settlement in a batch (settleOutboxBatch). */
export interface OutboxRowSettlement {
  eventId: string;
  settlement: OutboxSettlement;
}

/**
 * A batch's delivery attempts, recorded in its settle's step where the store folds them
 * (WebhookStore.foldsDeliveries; ADR 0021 "Delivery records in the settle"): each as
 * recordDelivery records it, in order, with the outbox's tenant and the failure limit.
 */
export interface OutboxBatchDeliveries {
  tenant: string;
  failureLimit: number;
  deliveries: WebhookDelivery[];
}

/** What a batch's settle did: rows settled, and endpoints its delivery records disabled. */
export interface OutboxBatchSettled {
  settled: number;
  disabled: { endpointId: string; reason: string }[];
}

/** A tenant's endpoints version, and its endpoints when the version moved from the one known. */
export interface WebhookEndpointsSince {
  version: number;
  /** Undefined when the version is the one known (the cache holds). */
  endpoints?: WebhookEndpoint[];
}

export interface WebhookEndpoint {
  tenant: string;
  endpointId: string;
  url: string;
  /** Empty: every type. */
  eventTypes: WebhookEventType[];
  /** `whsec_<base64 key>`. */
  secret: string;
  disabled: boolean;
  disabledReason: string;
  /** Failed attempts since the last success; at the threshold the endpoint is disabled. */
  consecutiveFailures: number;
  createdAtMs: number;
}

export type WebhookEndpointDraft = Omit<
  WebhookEndpoint,
  "disabled" | "disabledReason" | "consecutiveFailures"
>;

export interface WebhookEndpointUpdate {
  tenant: string;
  endpointId: string;
  url?: string;
  eventTypes?: WebhookEventType[];
  secret?: string;
  /** false re-enables the endpoint and clears its failure count and reason. */
  disabled?: boolean;
}

/** One attempt to deliver one event to one endpoint, as the delivery log keeps it. */
export interface WebhookDelivery {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventType: WebhookEventType;
  /** The event as sent, so a replay sends it again with the same id. */
  event: WebhookEvent;
  /** The outbox the event came from (a session id), so a replay goes back through it. */
  outboxId: string;
  attempt: number;
  ok: boolean;
  /** HTTP status, 0 when no response came. */
  status: number;
  error: string;
  atMs: number;
}

export interface WebhookDeliveryPage {
  deliveries: WebhookDelivery[];
  /** Undefined on the last page. */
  nextCursor: string | undefined;
}

/** Consecutive failed attempts after which an endpoint is disabled. */
export const WEBHOOK_FAILURE_LIMIT = 20;
/** How long an event is retried before it is given up. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Delivery log entries kept per endpoint (newest first). */
export const WEBHOOK_DELIVERY_LOG_LIMIT = 1000;

/**
 * Exponential backoff with full jitter: attempt 1 waits up to 1 s, doubling to a 1 h ceiling.
 * `random` is in [0, 1).
 */
export function webhookBackoffMs(attempt: number, random: number): number {
  const ceiling = Math.min(3_600_000, 1000 * 2 ** Math.max(0, attempt - 1));
  return Math.floor(ceiling / 2 + (random * ceiling) / 2);
}

export function parseWebhookEventTypes(raw: readonly string[], field: string): WebhookEventType[] {
  for (const type of raw) {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) {
      throw invalidArgument(field, `unknown event type ${JSON.stringify(type)}`);
    }
  }
  return [...new Set(raw)] as WebhookEventType[];
}

/** http or https only, with a host; no credentials in the URL (they would leak into logs). */
export function parseWebhookUrl(raw: string, field = "url"): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidArgument(field, "must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidArgument(field, "must use http or https");
  }
  if (url.username !== "" || url.password !== "") {
    throw invalidArgument(field, "must not carry credentials");
  }
  if (raw.length > 2048) throw invalidArgument(field, "must be at most 2048 characters");
  return url.toString();
}

/** A `whsec_` secret: the prefix, then a base64 key of 24 to 64 bytes. */
export function parseWebhookSecret(raw: string, field = "secret"): string {
  const key = raw.startsWith("whsec_") ? raw.slice("whsec_".length) : "";
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/u.test(key) ? Math.floor((key.length * 3) / 4) : 0;
  if (bytes < 24 || bytes > 66) {
    throw invalidArgument(field, "must be whsec_ followed by a base64 key of 24 to 64 bytes");
  }
  return raw;
}

export function wantsEvent(endpoint: WebhookEndpoint, type: WebhookEventType): boolean {
  return endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(type);
}

/** The tenant of a store session id `<tenant>:<client id>` (ADR 0003); "default" without one. */
export function tenantOfOutbox(outboxId: string): string {
  const at = outboxId.indexOf(":");
  return at < 0 ? "default" : outboxId.slice(0, at);
}

/**
 * The `schedule.paused` event of a schedule's pause, to the outbox `<tenant>:schedule:<id>` (so
 * tenantOfOutbox finds the tenant), written by WebhookOutboxStore.enqueueWebhookEvent before the
 * pause is settled (scheduler.ts). The id is the paused occurrence's, so a fire retried after its
 * claimer died writes the same event again, which the outbox keeps once.
 */
export function schedulePausedEvent(
  tenant: string,
  scheduleId: string,
  reason: string,
  occurrenceMs: number,
  pausedAtMs = occurrenceMs,
): { outboxId: string; event: WebhookEvent } {
  return {
    outboxId: `${tenant}:schedule:${scheduleId}`,
    event: {
      id: `msg_sched_${scheduleId}_${occurrenceMs}`,
      type: "schedule.paused",
      createdAtMs: pausedAtMs,
      data: { schedule_id: scheduleId, reason },
    },
  };
}
