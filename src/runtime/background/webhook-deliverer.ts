// The webhook deliverer (ADR 0021): takes due outbox rows under a lease (so replicas never send a
// row at the same time, and a dead replica's rows come back when the lease runs out), sends each
// event to every endpoint of the tenant that wants it, logs each attempt, and settles the row:
// done, or retried later with exponential backoff and jitter for the endpoints that failed, the
// same event id each time, for up to 24 h. At least once, unordered.
import { randomUUID } from "node:crypto";
import type { OutboxId } from "../../domain/ids.js";
import type { FoldedOutboxClaim } from "../../domain/session.js";
import {
  tenantOfOutbox,
  type OutboxClaimReport,
  type WebhookEndpoint,
} from "../../domain/webhooks.js";
import type { WebhookStore } from "../../ports/webhook-store.js";
import { createRowDelivery, type WebhookDelivererOptions } from "./webhook-rows.js";

export type { WebhookDelivererOptions } from "./webhook-rows.js";

export interface WebhookDeliverer {
  start(): void;
  /**
   * Looks at an outbox soon (a commit or park of this replica wrote to it), in a batch with the
   * others nudged meanwhile. False when the deliverer is stopped (the writer notes the hint).
   */
  nudge(outboxId: OutboxId): boolean;
  /**
   * The claim a commit of this replica takes in its step for this deliverer (ADR 0021 "Folded
   * into the commit"); undefined when stopped (the writer then notes the hint).
   */
  claimTicket(): OutboxClaimTicket | undefined;
  /**
   * Delivers the rows a commit claimed for this deliverer: with the tenant's cached endpoints
   * when the version read in the commit's step is the cached one, else read first. `seenAtMs`:
   * the writer's now before its commit (the look's start, for the hint's settle).
   */
  deliverClaimed(outboxId: OutboxId, claimed: FoldedOutboxClaim, seenAtMs: number): void;
  /** Stops polling and waits for the round in flight. */
  stop(): Promise<void>;
}

/** What a commit needs to claim rows for a deliverer (CommitOutboxFold.claim). */
export interface OutboxClaimTicket {
  claimToken: string;
  leaseMs: number;
  max: number;
}

const ROWS_PER_CLAIM = 16;
const OUTBOXES_PER_ROUND = 64;
export function createWebhookDeliverer(options: WebhookDelivererOptions): WebhookDeliverer {
  const { store, clock, logger } = options;
  const pollMs = options.pollMs ?? 500;
  const leaseMs = options.leaseMs ?? 60_000;
  const token = `deliverer-${randomUUID()}`;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let stopped = true;
  const inFlight = new Set<Promise<void>>();
  const busy = new Set<OutboxId>();
  // Nudged and not looked at yet; nudged while a look held them (looked at again after it).
  const pending = new Set<OutboxId>();
  const again = new Set<OutboxId>();
  let flushing = false;

  const { endpointsOf, endpointsAt, deliverOutbox } = createRowDelivery(options, token);
  const ticket: OutboxClaimTicket = { claimToken: token, leaseMs, max: ROWS_PER_CLAIM };

  /**
   * One batch: every outbox's claim and each tenant's endpoint check in one round trip. Resolves
   * once claimed, with the deliveries, each of which frees its outbox when settled: a slow
   * endpoint holds its own outbox, not the next batch.
   */
  async function look(ids: OutboxId[], nudged: boolean): Promise<{ delivered: Promise<void> }> {
    const mine = ids.filter((id) => !busy.has(id));
    for (const id of ids) if (busy.has(id)) again.add(id);
    for (const id of mine) busy.add(id);
    const release = (id: OutboxId) => {
      busy.delete(id);
      if (again.delete(id)) {
        pending.add(id);
        flush();
      }
    };
    const seenAtMs = clock.nowMs();
    const check = (tenants: string[]) =>
      Promise.all(tenants.map((t) => endpointsOf(t).catch((error: unknown) => error)));
    const claims = Promise.all(mine.map((id) => claimed(id)));
    // A nudged batch sends its endpoint checks with its claims (one round trip); a poll's look,
    // mostly at outboxes with nothing due, checks only the tenants it took rows of.
    let tenants = [...new Set(mine.map(tenantOfOutbox))];
    let reports: (OutboxClaimReport | undefined)[];
    let endpoints: unknown[];
    if (nudged) {
      [reports, endpoints] = await Promise.all([claims, check(tenants)]);
    } else {
      reports = await claims;
      const took = mine.filter((_, i) => (reports[i]?.claims.length ?? 0) > 0);
      tenants = [...new Set(took.map(tenantOfOutbox))];
      endpoints = await check(tenants);
    }
    const byTenant = new Map(tenants.map((t, i) => [t, endpoints[i]]));
    const deliveries = mine.map(async (id, i) => {
      const report = reports[i];
      const found = report?.claims.length ? byTenant.get(tenantOfOutbox(id)) : [];
      try {
        if (!report) return;
        if (!Array.isArray(found)) throw found;
        await deliverOutbox(id, report, found as WebhookEndpoint[], seenAtMs, nudged);
      } catch (error) {
        logger.warn(
          { outboxId: id, error },
          "webhook outbox round failed; its rows come back after their lease",
        );
      } finally {
        release(id);
      }
    });
    return { delivered: Promise.all(deliveries).then(() => undefined) };
  }

  async function claimed(outboxId: OutboxId): Promise<OutboxClaimReport | undefined> {
    try {
      return await store.claimOutbox(outboxId, token, leaseMs, ROWS_PER_CLAIM);
    } catch (error) {
      logger.warn({ outboxId, error }, "webhook outbox not claimed; it is looked at again later");
      return undefined;
    }
  }

  function track(work: Promise<void>): void {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  // Nudges that come while a batch is claimed wait for the next one: under load one claim
  // round trip and one endpoint check serve many turns; an idle replica looks at once.
  function flush(): void {
    if (flushing || stopped) return;
    flushing = true;
    track(
      (async () => {
        try {
          while (pending.size > 0) {
            const ids = [...pending].slice(0, OUTBOXES_PER_ROUND);
            for (const id of ids) pending.delete(id);
            track((await look(ids, true)).delivered);
          }
        } finally {
          flushing = false;
        }
      })(),
    );
  }

  async function round(): Promise<void> {
    if (running) return;
    running = true;
    try {
      await (
        await look(await store.dueOutboxes(OUTBOXES_PER_ROUND), false)
      ).delivered;
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
      if (stopped) return false;
      pending.add(outboxId);
      flush();
      return true;
    },
    claimTicket: () => (stopped ? undefined : ticket),
    deliverClaimed(outboxId, claimed, seenAtMs) {
      // Delivered even when stopped meanwhile: the rows are this deliverer's until their lease
      // ends, and stop() waits for tracked work.
      track(
        (async () => {
          try {
            const { report, endpointsVersion } = claimed;
            const endpoints = report.claims.length
              ? await endpointsAt(tenantOfOutbox(outboxId), endpointsVersion)
              : [];
            await deliverOutbox(outboxId, report, endpoints, seenAtMs, true);
          } catch (error) {
            logger.warn(
              { outboxId, error },
              "webhook outbox round failed; its rows come back after their lease",
            );
          }
        })(),
      );
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      // A batch tracks its deliveries once claimed: wait until no work is left, not one pass.
      while (inFlight.size > 0) await Promise.all([...inFlight]);
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
      // Listed with the row where the store keeps the hint in its steps; else noted after it.
      if (store.keepsOutboxHint !== true) await store.noteOutbox(outboxId, 0);
      return true;
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return false;
}
