// Sends one webhook event to one endpoint, signed the Standard Webhooks way (webhook-id,
// webhook-timestamp, webhook-signature: v1 HMAC-SHA256 over `id.timestamp.body`). The address
// is resolved and checked here, at delivery time, and the request is pinned to the checked
// address (so a DNS answer that changes between check and connect cannot reach a private host).
// Redirects are never followed: a 3xx is a failed attempt.
import { lookup } from "node:dns/promises";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { Webhook } from "standardwebhooks";
import type { WebhookEvent } from "../domain/webhooks.js";
import type { WebhookSend } from "../ports/webhook-sender.js";

export interface SendOptions {
  /** TETHER_WEBHOOK_ALLOW_PRIVATE: loopback and private addresses are refused unless true. */
  allowPrivate: boolean;
  timeoutMs: number;
}

// Two lists: Node matches an IPv4 address against IPv6 rules as if IPv4-mapped, so one list
// holding ::ffff:0:0/96 would refuse every IPv4 address.
const PRIVATE_V4 = new BlockList();
const PRIVATE_V6 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
] as const) {
  PRIVATE_V4.addSubnet(net, prefix, "ipv4");
}
// IPv6 forms that carry an IPv4 address reach it too: IPv4-compatible (::/96, ::7f00:1 is
// 127.0.0.1), IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96 and the local-use
// 64:ff9b:1::/48) and 6to4 (2002::/16). All are refused rather than decoded: no webhook needs them.
for (const [net, prefix] of [
  ["::", 96],
  ["::ffff:0:0", 96],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  PRIVATE_V6.addSubnet(net, prefix, "ipv6");
}

/**
 * Loopback, private, link-local, shared, multicast or unspecified, or an IPv6 address that embeds
 * an IPv4 one (see above).
 */
export function isPrivateAddress(address: string): boolean {
  return isIP(address) === 6
    ? PRIVATE_V6.check(address, "ipv6")
    : PRIVATE_V4.check(address, "ipv4");
}

/** The wire body of a thin event (Standard Webhooks: type, timestamp, data). */
export function webhookBody(event: WebhookEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: new Date(event.createdAtMs).toISOString(),
    data: event.data,
  });
}

/**
 * The one refusal a tenant sees, whether the name did not resolve or resolved to an address it
 * may not reach: telling the two apart would let a tenant probe which internal names exist.
 */
export const UNDELIVERABLE = "refused: the host is not a reachable public address";

async function resolveChecked(host: string, allowPrivate: boolean): Promise<string> {
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  let address: string;
  try {
    address = isIP(bare) !== 0 ? bare : (await lookup(bare)).address;
  } catch {
    throw new Error(UNDELIVERABLE);
  }
  if (!allowPrivate && isPrivateAddress(address)) throw new Error(UNDELIVERABLE);
  return address;
}

function post(url: URL, options: RequestOptions, body: string, timeoutMs: number) {
  return new Promise<number>((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(url, options, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

export function createWebhookSender(options: SendOptions): WebhookSend {
  return async (endpoint, event) => {
    const url = new URL(endpoint.url);
    const body = webhookBody(event);
    let address: string;
    try {
      address = await resolveChecked(url.hostname, options.allowPrivate);
    } catch (error) {
      return {
        ok: false,
        status: 0,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    const pinned: LookupFunction = (_host, opts, callback) => {
      const family = isIP(address);
      if ((opts as { all?: boolean }).all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const timestamp = new Date();
    const signature = new Webhook(endpoint.secret).sign(event.id, timestamp, body);
    const headers = {
      "content-type": "application/json",
      "user-agent": "tether-webhooks",
      "webhook-id": event.id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signature,
    };
    try {
      const status = await post(
        url,
        { method: "POST", headers, lookup: pinned },
        body,
        options.timeoutMs,
      );
      const ok = status >= 200 && status < 300;
      const error = ok
        ? ""
        : status >= 300 && status < 400
          ? `redirect ${status} not followed`
          : `HTTP ${status}`;
      return { ok, status, error };
    } catch (error) {
      return {
        ok: false,
        status: 0,
        error: error instanceof Error ? error.message : String(error),
      };
    }
  };
}
