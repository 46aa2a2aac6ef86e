// WebhookService (ADR 0021): the caller's tenant's endpoints and their delivery logs. The secret
// is generated here when the caller gives none, shown once on create and never read back.
import { randomBytes } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { invalidArgument } from "../domain/errors.js";
import {
  webhookEndpointAlreadyExists,
  webhookEndpointNotFound,
} from "../domain/resource-errors.js";
import {
  parseWebhookEventTypes,
  parseWebhookSecret,
  parseWebhookUrl,
  type WebhookEndpoint,
} from "../domain/webhooks.js";
import type {
  WebhookEndpoint as ProtoEndpoint,
  WebhookService,
} from "../gen/tether/v1/webhook_service_pb.js";
import type { WebhookStore } from "../ports/webhook-store.js";
import { replayDelivery } from "../runtime/index.js";
import { decodePageToken, encodePageToken } from "./convert/page-token.js";
import { pageSizeOf } from "./page-size.js";
import { checkClientSessionId, scopeOf } from "./tenancy.js";

function toProto(e: WebhookEndpoint, withSecret: boolean): Omit<ProtoEndpoint, "$typeName"> {
  return {
    endpointId: e.endpointId,
    url: e.url,
    eventTypes: [...e.eventTypes],
    secret: withSecret ? e.secret : "",
    disabled: e.disabled,
    disabledReason: e.disabledReason,
    consecutiveFailures: e.consecutiveFailures,
    createdAtMs: BigInt(e.createdAtMs),
  };
}

const endpointIdOf = (raw: string) => checkClientSessionId(raw, "endpoint_id");

export function createWebhookService(store: WebhookStore): ServiceImpl<typeof WebhookService> {
  async function found(tenant: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await store.getEndpoint(tenant, endpointId);
    if (!endpoint) throw webhookEndpointNotFound(endpointId);
    return endpoint;
  }
  return {
    async createWebhookEndpoint(req, ctx) {
      const { tenant } = scopeOf(ctx.values);
      const endpointId = endpointIdOf(req.endpointId);
      const created = await store.createEndpoint({
        tenant,
        endpointId,
        url: parseWebhookUrl(req.url),
        eventTypes: parseWebhookEventTypes(req.eventTypes, "event_types"),
        secret:
          req.secret === ""
            ? `whsec_${randomBytes(32).toString("base64")}`
            : parseWebhookSecret(req.secret),
        createdAtMs: Date.now(),
      });
      if (!created) throw webhookEndpointAlreadyExists(endpointId);
      return { endpoint: toProto(created, true) };
    },

    async getWebhookEndpoint(req, ctx) {
      const { tenant } = scopeOf(ctx.values);
      return { endpoint: toProto(await found(tenant, endpointIdOf(req.endpointId)), false) };
    },

    async listWebhookEndpoints(_req, ctx) {
      const { tenant } = scopeOf(ctx.values);
      const all = await store.listEndpoints(tenant);
      return { endpoints: all.map((e) => toProto(e, false)) };
    },

    async updateWebhookEndpoint(req, ctx) {
      const { tenant } = scopeOf(ctx.values);
      const endpointId = endpointIdOf(req.endpointId);
      const updated = await store.updateEndpoint({
        tenant,
        endpointId,
        ...(req.url !== undefined && { url: parseWebhookUrl(req.url) }),
        ...(req.updateEventTypes && {
          eventTypes: parseWebhookEventTypes(req.eventTypes, "event_types"),
        }),
        ...(req.secret !== undefined && { secret: parseWebhookSecret(req.secret) }),
        ...(req.disabled !== undefined && { disabled: req.disabled }),
      });
      if (!updated) throw webhookEndpointNotFound(endpointId);
      return { endpoint: toProto(updated, false) };
    },

    async deleteWebhookEndpoint(req, ctx) {
      const { tenant } = scopeOf(ctx.values);
      const endpointId = endpointIdOf(req.endpointId);
      if (!(await store.deleteEndpoint(tenant, endpointId))) {
        throw webhookEndpointNotFound(endpointId);
      }
      return {};
    },

    async listWebhookDeliveries(req, ctx) {
      const scope = scopeOf(ctx.values);
      const endpointId = endpointIdOf(req.endpointId);
      await found(scope.tenant, endpointId);
      const limit = pageSizeOf("ListWebhookDeliveries", req.pageSize);
      const cursor = decodePageToken(req.pageToken);
      const page = await store.listDeliveries(scope.tenant, endpointId, {
        limit,
        ...(cursor !== undefined && { cursor }),
      });
      return {
        deliveries: page.deliveries.map((d) => ({
          deliveryId: d.deliveryId,
          eventId: d.eventId,
          eventType: d.eventType,
          sessionId: scope.toClient(d.outboxId),
          attempt: d.attempt,
          ok: d.ok,
          status: d.status,
          error: d.error,
          atMs: BigInt(d.atMs),
        })),
        nextPageToken: page.nextCursor === undefined ? "" : encodePageToken(page.nextCursor),
      };
    },

    async replayWebhookDelivery(req, ctx) {
      const { tenant } = scopeOf(ctx.values);
      const endpointId = endpointIdOf(req.endpointId);
      await found(tenant, endpointId);
      if (req.deliveryId === "") throw invalidArgument("delivery_id", "must be non-empty");
      const page = await store.listDeliveries(tenant, endpointId, { limit: 1_000 });
      if (!page.deliveries.some((d) => d.deliveryId === req.deliveryId)) {
        throw invalidArgument("delivery_id", "is not in the endpoint's delivery log");
      }
      return { queued: await replayDelivery(store, tenant, endpointId, req.deliveryId) };
    },
  };
}
