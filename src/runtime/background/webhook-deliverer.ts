// The webhook deliverer (ADR 0021): takes due outbox rows under a lease (so replicas never send a
// row at the same time, and a dead replica's rows come back when the lease runs out), sends each
// event to every endpoint of the tenant that wants it, logs each attempt, and settles the row:
// done, or retried later with exponential backoff and jitter for the endpoints that failed, the
// same event id each time, for up to 24 h. At least once, unordered.
import { randomUUID } from "node:crypto";
import type { OutboxId } from "../../domain/ids.js";
import {
  WEBHOOK_FAILURE_LIMIT,
  WEBHOOK_RETRY_WINDOW_MS,
  tenantOfOutbox,
  wantsEvent,
  webhookBackoffMs,
  type OutboxClaim,
  type WebhookEndpoint,
} from "../../domain/webhooks.js";
import type { Clock } from "../../ports/clock.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import type { RuntimeLogger } from "../deps.js";
import type { WebhookSend } from "../../ports/webhook-sender.js";

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

export interface WebhookDeliverer {
  start(): void;
  /** Looks at an outbox now (a commit or park of this replica wrote to it). */
  nudge(outboxId: OutboxId): void;
  /** Stops polling and waits for the round in flight. */
  stop(): Promise<void>;
}

const ROWS_PER_CLAIM = 16;
const OUTBOXES_PER_ROUND = 64;

export function createWebhookDeliverer(options: WebhookDelivererOptions): WebhookDeliverer {
  const { store, send, clock, logger } = options;
  const pollMs = options.pollMs ?? 500;
  const leaseMs = options.leaseMs ?? 60_000;
  const failureLimit = options.failureLimit ?? WEBHOOK_FAILURE_LIMIT;
  const retryWindowMs = options.retryWindowMs ?? WEBHOOK_RETRY_WINDOW_MS;
  const random = options.random ?? Math.random;
  const backoff = options.backoffMs ?? ((n: number) => webhookBackoffMs(n, random()));
  const token = `deliverer-${randomUUID()}`;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let stopped = true;
  const inFlight = new Set<Promise<void>>();
  const busy = new Set<OutboxId>();

  async function attempt(
    tenant: string,
    endpoint: WebhookEndpoint,
    claim: OutboxClaim,
    outboxId: OutboxId,
  ) {
    const event = claim.row.event;
    const report = await send(endpoint, event);
    options.onAttempt?.(report.ok ? "delivered" : "failed");
    const after = await store.recordDelivery(
      tenant,
      {
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
      },
      failureLimit,
    );
    if (after?.disabled && !endpoint.disabled) {
      logger.warn(
        { tenant, endpointId: endpoint.endpointId, reason: after.disabledReason },
        "webhook endpoint disabled",
      );
      options.onDisabled?.(tenant, endpoint.endpointId);
    }
    // A deleted or now disabled endpoint is owed nothing more.
    return report.ok || after === undefined || after.disabled;
  }

  async function deliverRow(outboxId: OutboxId, claim: OutboxClaim): Promise<number | undefined> {
    const tenant = tenantOfOutbox(outboxId);
    const { row } = claim;
    const endpoints = (await store.listEndpoints(tenant)).filter(
      (e) =>
        !e.disabled &&
        wantsEvent(e, row.event.type) &&
        (row.targets === undefined || row.targets.includes(e.endpointId)),
    );
    const settled = await Promise.all(endpoints.map((e) => attempt(tenant, e, claim, outboxId)));
    const owed = endpoints.filter((_, i) => !settled[i]).map((e) => e.endpointId);
    const expired = clock.nowMs() - row.event.createdAtMs > retryWindowMs;
    if (owed.length === 0 || expired) {
      if (owed.length > 0) {
        logger.warn(
          { outboxId, eventId: row.event.id, owed },
          "webhook event given up after its retry window",
        );
      }
      await store.settleOutbox(outboxId, row.event.id, claim.claimToken, { kind: "done" });
      return undefined;
    }
    const dueAtMs = clock.nowMs() + backoff(row.attempts + 1);
    await store.settleOutbox(outboxId, row.event.id, claim.claimToken, {
      kind: "retry",
      dueAtMs,
      targets: owed,
    });
    return dueAtMs;
  }

  async function drain(outboxId: OutboxId): Promise<void> {
    if (busy.has(outboxId)) return;
    busy.add(outboxId);
    try {
      const seenAtMs = clock.nowMs();
      const report = await store.claimOutbox(outboxId, token, leaseMs, ROWS_PER_CLAIM);
      const dues = await Promise.all(report.claims.map((c) => deliverRow(outboxId, c)));
      const later = dues.filter((d): d is number => d !== undefined);
      // Rows left unclaimed (over the batch, or held by another deliverer) keep the hint due now.
      if (report.remaining > report.claims.length) later.push(clock.nowMs());
      const next = later.length > 0 ? Math.min(...later) : undefined;
      await store.settleOutboxHint(outboxId, seenAtMs, next);
    } catch (error) {
      logger.warn(
        { outboxId, error },
        "webhook outbox round failed; its rows come back after their lease",
      );
    } finally {
      busy.delete(outboxId);
    }
  }

  function track(work: Promise<void>): void {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  async function round(): Promise<void> {
    if (running) return;
    running = true;
    try {
      const due = await store.dueOutboxes(OUTBOXES_PER_ROUND);
      await Promise.all(due.map(drain));
    } catch (error) {
      logger.warn({ error }, "webhook due outboxes not read");
    } finally {
      running = false;
      // Unref'd: a replica with nothing else to do exits; shutdown stops the deliverer anyway.
      if (!stopped) timer = setTimeout(() => track(round()), pollMs).unref();
    }
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      track(round());
    },
    nudge(outboxId) {
      if (!stopped) track(drain(outboxId));
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all([...inFlight]);
    },
  };
}

/**
 * Sends a logged delivery's event again, to that endpoint only, through the outbox it came from
 * (same event id, so receivers deduplicate). False when the delivery is not in the log, or the
 * event is still pending in its outbox (it is being retried already).
 */
export async function replayDelivery(
  store: WebhookStore,
  tenant: string,
  endpointId: string,
  deliveryId: string,
): Promise<boolean> {
  let cursor: string | undefined;
  do {
    const page = await store.listDeliveries(tenant, endpointId, {
      limit: 200,
      ...(cursor !== undefined && { cursor }),
    });
    const found = page.deliveries.find((d) => d.deliveryId === deliveryId);
    if (found) {
      const outboxId = found.outboxId as OutboxId;
      if (!(await store.enqueueWebhookEvent(outboxId, found.event, [endpointId]))) return false;
      await store.noteOutbox(outboxId, 0);
      return true;
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return false;
}
