// Webhooks in the fault suite (ADR 0021): one endpoint of the default tenant points at a receiver
// in the runner that verifies every signature; after the workload, every committed turn of every
// session must have been delivered (a turn.* event naming its turn id) at least once, while
// replicas were killed, paused and restarted and Redis restarted under the deliverers.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Cluster, Redis } from "ioredis";
import type { SessionId } from "../../src/domain/ids.js";
import { WebhookService } from "../../src/gen/tether/v1/webhook_service_pb.js";
import { createRedisStore } from "../../src/store/redis/index.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { sleep, waitFor } from "../support/wait-for.js";

export const FAULT_WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/** What the replicas need to deliver to a receiver on loopback, promptly. */
export const FAULT_WEBHOOK_ENV = {
  TETHER_WEBHOOK_ALLOW_PRIVATE: "true",
  TETHER_WEBHOOK_POLL_MS: "200",
  TETHER_WEBHOOK_LEASE_MS: "3000",
};

export interface WebhookReport {
  /** Turns committed (each must have one event delivered). */
  turns: number;
  delivered: number;
  /** Committed turns whose event never arrived within the wait. */
  webhooks_undelivered: number;
  /** Arrivals of an event id already received (at least once allows them; counted). */
  duplicates: number;
  /** Requests whose signature did not verify (must be 0). */
  unverified: number;
}

export async function startFaultReceiver(): Promise<WebhookReceiver> {
  return startWebhookReceiver(FAULT_WEBHOOK_SECRET);
}

/** Registers the receiver as the default tenant's endpoint, through the first replica that answers. */
export async function registerEndpoint(addresses: string[], url: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const address = addresses[attempt % addresses.length] ?? "";
    const api = createClient(WebhookService, createGrpcTransport({ baseUrl: address }));
    try {
      await api.createWebhookEndpoint({ endpointId: "faults", url, secret: FAULT_WEBHOOK_SECRET });
      return;
    } catch {
      await sleep(200);
    }
  }
  throw new Error("no replica registered the webhook endpoint");
}

/** Waits (bounded) until every committed turn's event arrived, then counts what did not. */
export async function checkWebhooks(
  redis: Redis | Cluster,
  sessions: string[],
  receiver: WebhookReceiver,
  waitMs: number,
): Promise<WebhookReport> {
  const store = createRedisStore({ redis });
  const turns = new Map<string, number>();
  for (const sessionId of sessions) {
    const snapshot = await store.loadSession(`default:${sessionId}` as SessionId);
    turns.set(sessionId, snapshot?.turnIndex ?? 0);
  }
  const missing = (): number => {
    const seen = new Map<string, Set<string>>();
    for (const d of receiver.delivered) {
      if (!d.body.type.startsWith("turn.")) continue;
      const sid = String(d.body.data.session_id);
      let set = seen.get(sid);
      if (!set) seen.set(sid, (set = new Set()));
      set.add(String(d.body.data.turn_id));
    }
    let n = 0;
    for (const [sid, count] of turns) n += Math.max(0, count - (seen.get(sid)?.size ?? 0));
    return n;
  };
  // Whatever is still missing at the deadline is reported, not thrown.
  await waitFor(() => missing() === 0, {
    what: "every turn's webhook",
    timeoutMs: Math.max(1, waitMs),
    intervalMs: 200,
  }).catch(() => undefined);
  const ids = receiver.delivered.map((d) => d.id);
  const total = [...turns.values()].reduce((a, b) => a + b, 0);
  return {
    turns: total,
    delivered: total - missing(),
    webhooks_undelivered: missing(),
    duplicates: ids.length - new Set(ids).size,
    unverified: receiver.rejected,
  };
}
