// The webhook deliverer's per-row work (ADR 0021): each tenant's endpoints from a cache checked
// against the tenant's endpoints version ("Batches"), and one row sent to every endpoint that
// wants it, each attempt logged, to a settlement: done, or retried later for those that failed;
// then the rows of one claim settled in one step and the outbox's hint moved or left.
import type { OutboxId } from "../../domain/ids.js";
import {
  WEBHOOK_FAILURE_LIMIT,
  WEBHOOK_RETRY_WINDOW_MS,
  tenantOfOutbox,
  wantsEvent,
  webhookBackoffMs,
  type OutboxClaim,
  type OutboxClaimReport,
  type OutboxRowSettlement,
  type WebhookDelivery,
  type WebhookEndpoint,
} from "../../domain/webhooks.js";
import type { Clock } from "../../ports/clock.js";
import type { WebhookSend } from "../../ports/webhook-sender.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import type { RuntimeLogger } from "../deps.js";

export interface WebhookDelivererOptions {
  store: WebhookStore;
  send: WebhookSend;
  clock: Clock;
  logger: RuntimeLogger;
  /** How often the due-outbox hint is read when nothing nudged (ms). */
  pollMs?: number;
  /** How long a claimed row is this replica's before another may take it (ms). */
  leaseMs?: number;
  failureLimit?: number;
  retryWindowMs?: number;
  random?: () => number;
  /** The wait before attempt n+1 (webhookBackoffMs with `random` by default). */
  backoffMs?: (attempt: number) => number;
  /** Counts attempts by result and endpoints disabled (Prometheus, when wired). */
  onAttempt?: (result: "delivered" | "failed") => void;
  onDisabled?: (tenant: string, endpointId: string) => void;
}

/** Tenants whose endpoints are cached; past it the cache starts over (a bound, not an LRU). */
const CACHED_TENANTS = 10_000;

interface CachedEndpoints {
  version: number;
  endpoints: WebhookEndpoint[];
}

/** A deliverer's row work under its claim token `token`. */
export function createRowDelivery(options: WebhookDelivererOptions, token: string) {
  const { store, send, clock, logger } = options;
  const failureLimit = options.failureLimit ?? WEBHOOK_FAILURE_LIMIT;
  const retryWindowMs = options.retryWindowMs ?? WEBHOOK_RETRY_WINDOW_MS;
  const random = options.random ?? Math.random;
  const backoff = options.backoffMs ?? ((n: number) => webhookBackoffMs(n, random()));
  const cache = new Map<string, CachedEndpoints>();

  // The cache check goes with the claims (ADR 0021 "Batches"): every endpoint change moves the
  // tenant's version in its own step, so a delete or a rotation acknowledged before the claim
  // is seen here, as a fresh read of every endpoint would.
  async function endpointsOf(tenant: string): Promise<WebhookEndpoint[]> {
    const known = cache.get(tenant);
    const fresh = await store.endpointsSince(tenant, known?.version);
    if (!fresh.endpoints) return known?.endpoints ?? [];
    if (cache.size >= CACHED_TENANTS) cache.clear();
    cache.set(tenant, { version: fresh.version, endpoints: fresh.endpoints });
    return fresh.endpoints;
  }

  // A commit's folded claim read the version in its step: the cache serves only that version.
  async function endpointsAt(tenant: string, version: number): Promise<WebhookEndpoint[]> {
    const known = cache.get(tenant);
    return known?.version === version ? known.endpoints : endpointsOf(tenant);
  }

  // Where the store folds them, the batch's records ride in its settle (ADR 0021 "Delivery
  // records in the settle"): the settle drops the owed endpoints they disable or find deleted.
  const folds = store.foldsDeliveries === true;
  const keepsHint = store.keepsOutboxHint === true;

  function disabledNow(tenant: string, endpointId: string, reason: string): void {
    logger.warn({ tenant, endpointId, reason }, "webhook endpoint disabled");
    options.onDisabled?.(tenant, endpointId);
  }

  /** Whether `endpoint` is owed nothing more for this row after this attempt. */
  async function attempt(
    tenant: string,
    endpoint: WebhookEndpoint,
    claim: OutboxClaim,
    outboxId: OutboxId,
    records: WebhookDelivery[],
  ): Promise<boolean> {
    const event = claim.row.event;
    const report = await send(endpoint, event);
    options.onAttempt?.(report.ok ? "delivered" : "failed");
    const delivery: WebhookDelivery = {
      deliveryId: `${event.id}.${endpoint.endpointId}.${claim.row.attempts + 1}`,
      endpointId: endpoint.endpointId,
      eventId: event.id,
      eventType: event.type,
      event,
      outboxId,
      attempt: claim.row.attempts + 1,
      ok: report.ok,
      status: report.status,
      error: report.error,
      atMs: clock.nowMs(),
    };
    if (folds) {
      records.push(delivery);
      return report.ok;
    }
    const after = await store.recordDelivery(tenant, delivery, failureLimit);
    if (after?.disabled && !endpoint.disabled) {
      disabledNow(tenant, endpoint.endpointId, after.disabledReason);
    }
    // A deleted or now disabled endpoint is owed nothing more.
    return report.ok || after === undefined || after.disabled;
  }

  async function deliverRow(
    outboxId: OutboxId,
    claim: OutboxClaim,
    all: WebhookEndpoint[],
    records: WebhookDelivery[],
  ): Promise<OutboxRowSettlement> {
    const tenant = tenantOfOutbox(outboxId);
    const { row } = claim;
    const endpoints = all.filter(
      (e) =>
        !e.disabled &&
        wantsEvent(e, row.event.type) &&
        (row.targets === undefined || row.targets.includes(e.endpointId)),
    );
    const settled = await Promise.all(
      endpoints.map((e) => attempt(tenant, e, claim, outboxId, records)),
    );
    const owed = endpoints.filter((_, i) => !settled[i]).map((e) => e.endpointId);
    const expired = clock.nowMs() - row.event.createdAtMs > retryWindowMs;
    const eventId = row.event.id;
    if (owed.length === 0 || expired) {
      if (owed.length > 0) {
        logger.warn({ outboxId, eventId, owed }, "webhook event given up after its retry window");
      }
      return { eventId, settlement: { kind: "done" } };
    }
    const dueAtMs = clock.nowMs() + backoff(row.attempts + 1);
    return { eventId, settlement: { kind: "retry", dueAtMs, targets: owed } };
  }

  async function deliverOutbox(
    outboxId: OutboxId,
    report: OutboxClaimReport,
    endpoints: WebhookEndpoint[],
    seenAtMs: number,
    nudged: boolean,
  ): Promise<void> {
    const records: WebhookDelivery[] = [];
    const settlements = await Promise.all(
      report.claims.map((c) => deliverRow(outboxId, c, endpoints, records)),
    );
    // Where the store keeps the hint in its steps, the settle (of no rows when nothing was taken)
    // also sets the hint, exactly: dropped when it empties the outbox, else due when the first
    // row left is owed a look (ADR 0021 "The hint dropped in the settle"). Nothing else follows.
    if (settlements.length > 0 || keepsHint) {
      const tenant = tenantOfOutbox(outboxId);
      const deliveries =
        records.length > 0 ? { tenant, failureLimit, deliveries: records } : undefined;
      const { disabled } = await store.settleOutboxBatch(outboxId, token, settlements, deliveries);
      for (const d of disabled) disabledNow(tenant, d.endpointId, d.reason);
    }
    if (keepsHint) return;
    const later = settlements.flatMap((s) =>
      s.settlement.kind === "retry" ? [s.settlement.dueAtMs] : [],
    );
    // Rows left unclaimed (over the batch, or held by another deliverer) keep the hint due now.
    if (report.remaining > report.claims.length) later.push(clock.nowMs());
    const next = later.length > 0 ? Math.min(...later) : undefined;
    // A nudged look that delivered all it took leaves the hint where its writer's expect put it,
    // a lease ahead: a look then drops it (ADR 0021 "Batches"). Leaving a hint is always safe.
    if (nudged && next === undefined && report.claims.length > 0) return;
    await store.settleOutboxHint(outboxId, seenAtMs, next);
  }

  return { endpointsOf, endpointsAt, deliverOutbox };
}
