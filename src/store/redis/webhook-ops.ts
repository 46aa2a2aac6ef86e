// Webhooks on Redis (ADR 0021): each session's outbox is a hash in the session's slot (commit and
// park write it in their own scripts), the due-outbox hint a sorted set in its own slot, and each
// tenant's endpoints and delivery logs live under the tag `{webhooks:<tenant>}`.
import type { Cluster, Redis } from "ioredis";
import type { OutboxId, SessionId } from "../../domain/ids.js";
import { storageQuotaExhausted } from "../../domain/storage-quotas.js";
import { invalidArgument } from "../../domain/errors.js";
import {
  WEBHOOK_DELIVERY_LOG_LIMIT,
  type OutboxBatchDeliveries,
  type OutboxBatchSettled,
  type OutboxClaim,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
  type WebhookEventType,
} from "../../domain/webhooks.js";
import type { WebhookOutboxStore, WebhookStore } from "../../ports/webhook-store.js";
import { withChecks } from "../shared/checked.js";
import { webhookChecks } from "../shared/webhook-checks.js";
import { int, str } from "./codec.js";
import { withStoreErrors as guarded } from "./connections.js";
import { checkNamespace, outboxIndexKey, sessionKeys, webhookTenantKeys } from "./keys.js";
import { REPLY } from "./replies.js";
import { ASYNC_DURABILITY, withDurability, type RedisDurability } from "./durability.js";
import { createScriptRunner, type ScriptReply } from "./scripts.js";

export interface RedisWebhookStoreOptions {
  redis: Redis | Cluster;
  namespace?: string;
  /** The store's durability (ADR 0017): endpoint changes are acknowledged like a commit. */
  durability?: RedisDurability;
}

/** Lua's cjson writes an empty list as `{}`: read any non-list as empty. */
function decodeEndpoint(raw: string): WebhookEndpoint {
  const e = JSON.parse(raw) as WebhookEndpoint;
  return { ...e, eventTypes: Array.isArray(e.eventTypes) ? e.eventTypes : [] };
}

function encodeEndpoint(e: WebhookEndpoint): string {
  return JSON.stringify(e);
}

export function decodeClaims(reply: ScriptReply, claimToken: string): OutboxClaim[] {
  const leaseUntilMs = int(reply, 2);
  const claims: OutboxClaim[] = [];
  for (let i = 0, at = 4; i < int(reply, 3); i++, at += 4) {
    const targets = str(reply, at + 3);
    claims.push({
      row: {
        event: JSON.parse(str(reply, at)) as WebhookEvent,
        attempts: int(reply, at + 1),
        dueAtMs: int(reply, at + 2),
        targets: targets === "" ? undefined : (JSON.parse(targets) as string[]),
      },
      claimToken,
      leaseUntilMs,
    });
  }
  return claims;
}

/**
 * A settle's delivery records (settleOutboxBatch-n.lua): after the outbox and the hint index, the
 * tenant's endpoints hash and version, then each endpoint's delivery list once; each record names
 * its list's key.
 */
function recordsInSettle(namespace: string, deliveries: OutboxBatchDeliveries) {
  const tenant = webhookTenantKeys(namespace, deliveries.tenant);
  const keys = [tenant.endpoints, tenant.endpointsVersion];
  const listAt = new Map<string, number>();
  const records = deliveries.deliveries.map((d) => {
    let at = listAt.get(d.endpointId);
    if (at === undefined) {
      keys.push(tenant.deliveries(d.endpointId));
      // KEYS is 1-based in Lua, and the outbox and the hint index come first.
      at = keys.length + 2;
      listAt.set(d.endpointId, at);
    }
    return [at, d.endpointId, JSON.stringify(d), d.ok ? 1 : 0];
  });
  const args = [JSON.stringify(records), deliveries.failureLimit, WEBHOOK_DELIVERY_LOG_LIMIT];
  return { keys, args };
}

/** The outbox and hint operations (each outbox in its session's slot, the hint in its own). */
function redisOutboxOps(
  redis: Redis | Cluster,
  scripts: ReturnType<typeof createScriptRunner>,
  namespace: string,
  folds: boolean,
): Pick<WebhookStore, keyof WebhookOutboxStore> {
  // Every outbox lives in the slot of the session of its name (a session's own outbox is written
  // by its commit's script); one that names no session just has that slot to itself.
  const outbox = (id: OutboxId) => sessionKeys(namespace, id as SessionId).outbox;
  const index = outboxIndexKey(namespace);
  return {
    // Off Cluster the row and its hint are one step (ADR 0021 "The hint dropped in the settle").
    async enqueueWebhookEvent(outboxId, event, targets) {
      const args = [event.id, JSON.stringify(event), targets ? JSON.stringify(targets) : ""];
      const keys = folds ? [outbox(outboxId), index] : [outbox(outboxId)];
      const reply = await scripts.run("enqueueWebhookEvent", keys, [...args, outboxId]);
      return reply[0] === REPLY.OK;
    },
    async claimOutbox(outboxId, claimToken, leaseMs, max) {
      const reply = await scripts.run(
        "claimOutbox",
        [outbox(outboxId)],
        [claimToken, leaseMs, max],
      );
      return { claims: decodeClaims(reply, claimToken), remaining: int(reply, 1) };
    },
    async settleOutbox(outboxId, eventId, claimToken, settlement) {
      const retry = settlement.kind === "retry";
      const reply = await scripts.run(
        "settleOutbox",
        [outbox(outboxId)],
        [
          eventId,
          claimToken,
          settlement.kind,
          retry ? settlement.dueAtMs : 0,
          retry ? JSON.stringify(settlement.targets) : "[]",
        ],
      );
      return reply[0] === REPLY.OK;
    },
    async settleOutboxBatch(outboxId, claimToken, settlements, deliveries) {
      const rows = settlements.map(({ eventId, settlement: s }) =>
        s.kind === "done" ? [eventId, "done", 0, []] : [eventId, "retry", s.dueAtMs, s.targets],
      );
      // Off Cluster the settle that empties the outbox drops its hint in its step.
      const keys = folds ? [outbox(outboxId), index] : [outbox(outboxId)];
      const args: (string | number)[] = [claimToken, JSON.stringify(rows), folds ? outboxId : ""];
      if (deliveries) {
        if (!folds) {
          throw invalidArgument("deliveries", "this store records deliveries one by one");
        }
        const folded = recordsInSettle(namespace, deliveries);
        keys.push(...folded.keys);
        args.push(...folded.args);
      }
      const reply = await scripts.run("settleOutboxBatch", keys, args);
      const disabled: OutboxBatchSettled["disabled"] = [];
      for (let at = 2; at + 1 < reply.length; at += 2) {
        disabled.push({ endpointId: str(reply, at), reason: str(reply, at + 1) });
      }
      return { settled: int(reply, 1), disabled };
    },
    dueOutboxes: (limit) =>
      guarded(
        async () =>
          (await redis.zrangebyscore(index, "-inf", Date.now(), "LIMIT", 0, limit)) as OutboxId[],
      ),
    noteOutbox: (outboxId, dueAtMs) =>
      guarded(async () => {
        await redis.zadd(index, "LT", dueAtMs, outboxId);
      }),
    async expectOutbox(outboxId, nowMs, dueAtMs) {
      await scripts.run("expectOutbox", [index], [outboxId, nowMs, dueAtMs]);
    },
    // A row written after the look and before the drop, by a writer that did not live to note
    // it, keeps the hint due (ADR 0021 "The hint"): checked in the script where the outbox is on
    // the same server, else by an HLEN after the drop (Cluster: the outbox is in another slot).
    async settleOutboxHint(outboxId, seenAtMs, nextDueAtMs) {
      const reply = await scripts.run(
        "settleOutboxHint",
        folds ? [index, outbox(outboxId)] : [index],
        [outboxId, seenAtMs, nextDueAtMs ?? ""],
      );
      if (folds) return;
      if (int(reply, 1) === 1 && (await guarded(() => redis.hlen(outbox(outboxId)))) > 0) {
        await guarded(() => redis.zadd(index, "LT", 0, outboxId));
      }
    },
  };
}

export function createRedisWebhookStore(options: RedisWebhookStoreOptions): WebhookStore {
  const { redis } = options;
  const namespace = checkNamespace(options.namespace ?? "tether");
  const scripts = withDurability(createScriptRunner(redis), options.durability ?? ASYNC_DURABILITY);
  const tenantKeys = (tenant: string) => webhookTenantKeys(namespace, tenant);
  // On Cluster a tenant's keys are in another slot than the outbox: no records in the settle.
  const folds = !("isCluster" in redis && redis.isCluster);
  return withChecks(webhookChecks, {
    ...redisOutboxOps(redis, scripts, namespace, folds),
    foldsDeliveries: folds,
    keepsOutboxHint: folds,
    async createEndpoint(draft, maxEndpoints) {
      const endpoint = { ...draft, disabled: false, disabledReason: "", consecutiveFailures: 0 };
      const keys = tenantKeys(draft.tenant);
      const reply = await scripts.run(
        "createWebhookEndpoint",
        [keys.endpoints, keys.endpointsVersion],
        [draft.endpointId, encodeEndpoint(endpoint), maxEndpoints ?? 0],
      );
      if (reply[0] === REPLY.QUOTA_REFUSED) {
        throw storageQuotaExhausted(draft.tenant, "webhook_endpoints", maxEndpoints ?? 0);
      }
      return reply[0] === REPLY.OK ? endpoint : undefined;
    },
    async getEndpoint(tenant, endpointId) {
      const keys = tenantKeys(tenant);
      const reply = await scripts.run("readWebhookEndpoints", [keys.endpoints], [endpointId]);
      return reply[0] === REPLY.OK ? decodeEndpoint(str(reply, 1)) : undefined;
    },
    async listEndpoints(tenant) {
      const reply = await scripts.run("readWebhookEndpoints", [tenantKeys(tenant).endpoints], [""]);
      const all = reply.slice(1).map((raw) => decodeEndpoint(String(raw)));
      return all.sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
    },
    async endpointsSince(tenant, knownVersion) {
      const keys = tenantKeys(tenant);
      const reply = await scripts.run(
        "readWebhookEndpointsSince",
        [keys.endpoints, keys.endpointsVersion],
        [knownVersion ?? ""],
      );
      const version = int(reply, 1);
      if (int(reply, 2) === 0) return { version };
      const all = reply.slice(3).map((raw) => decodeEndpoint(String(raw)));
      return { version, endpoints: all.sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1)) };
    },
    async updateEndpoint(update) {
      const patch: {
        url?: string;
        eventTypes?: WebhookEventType[];
        secret?: string;
        disabled?: boolean;
      } = {};
      if (update.url !== undefined) patch.url = update.url;
      if (update.eventTypes !== undefined) patch.eventTypes = update.eventTypes;
      if (update.secret !== undefined) patch.secret = update.secret;
      if (update.disabled !== undefined) patch.disabled = update.disabled;
      const reply = await scripts.run(
        "updateWebhookEndpoint",
        [tenantKeys(update.tenant).endpoints, tenantKeys(update.tenant).endpointsVersion],
        [update.endpointId, JSON.stringify(patch)],
      );
      return reply[0] === REPLY.OK ? decodeEndpoint(str(reply, 1)) : undefined;
    },
    async deleteEndpoint(tenant, endpointId) {
      const keys = tenantKeys(tenant);
      const reply = await scripts.run(
        "deleteWebhookEndpoint",
        [keys.endpoints, keys.deliveries(endpointId), keys.endpointsVersion],
        [endpointId],
      );
      return reply[0] === REPLY.OK;
    },
    async recordDelivery(tenant, delivery, failureLimit) {
      const keys = tenantKeys(tenant);
      const reply = await scripts.run(
        "recordWebhookDelivery",
        [keys.endpoints, keys.deliveries(delivery.endpointId), keys.endpointsVersion],
        [
          delivery.endpointId,
          JSON.stringify(delivery),
          delivery.ok ? 1 : 0,
          failureLimit,
          WEBHOOK_DELIVERY_LOG_LIMIT,
        ],
      );
      return reply[0] === REPLY.OK ? decodeEndpoint(str(reply, 1)) : undefined;
    },
    async listDeliveries(tenant, endpointId, options) {
      const from = options.cursor === undefined ? 0 : Number(options.cursor);
      const reply = await scripts.run(
        "listWebhookDeliveries",
        [tenantKeys(tenant).deliveries(endpointId)],
        [from, options.limit],
      );
      const deliveries = reply.slice(2).map((raw) => JSON.parse(String(raw)) as WebhookDelivery);
      const next = from + deliveries.length;
      return { deliveries, nextCursor: next < int(reply, 1) ? String(next) : undefined };
    },
  });
}
