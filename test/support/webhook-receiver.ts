// A webhook receiver for tests: node:http on 127.0.0.1:0 that verifies every request the
// Standard Webhooks way (the standardwebhooks package's Webhook.verify over the raw body and the
// webhook-id / webhook-timestamp / webhook-signature headers) and records what it got. It can be
// told to fail the next N requests, or to answer with a redirect.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedWebhook {
  id: string;
  /** The parsed body, verified. */
  body: { id: string; type: string; created_at: string; data: Record<string, unknown> };
  /** When it arrived (performance.now(), ms). */
  atMs: number;
}

export interface WebhookReceiver {
  url: string;
  /** Verified deliveries answered 2xx, in arrival order. */
  delivered: ReceivedWebhook[];
  /** Every request, verified or not, with the status answered. */
  requests: { id: string; status: number; verified: boolean }[];
  /** Requests whose signature did not verify. */
  rejected: number;
  /** The next `n` verified requests are answered 500. */
  failNext(n: number): void;
  /** Every request from now on is answered with this status (undefined: back to normal). */
  answerAlways(status: number | undefined): void;
  close(): Promise<void>;
}

function headerMap(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === "string") out[k] = v;
  return out;
}

export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const verifier = new Webhook(secret);
  let failing = 0;
  let always: number | undefined;
  const receiver: Omit<WebhookReceiver, "url" | "close"> = {
    delivered: [],
    requests: [],
    rejected: 0,
    failNext: (n) => {
      failing = n;
    },
    answerAlways: (status) => {
      always = status;
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const id = req.headers["webhook-id"];
      let body: ReceivedWebhook["body"] | undefined;
      try {
        body = verifier.verify(raw, headerMap(req.headers)) as ReceivedWebhook["body"];
      } catch {
        receiver.rejected++;
      }
      let status = body ? 204 : 401;
      if (body && always !== undefined) status = always;
      else if (body && failing > 0) {
        failing--;
        status = 500;
      }
      receiver.requests.push({ id: String(id), status, verified: body !== undefined });
      if (body && status < 300)
        receiver.delivered.push({ id: String(id), body, atMs: performance.now() });
      res.writeHead(
        status,
        status >= 300 && status < 400 ? { location: "http://example.com/" } : {},
      );
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...receiver,
    get delivered() {
      return receiver.delivered;
    },
    get requests() {
      return receiver.requests;
    },
    get rejected() {
      return receiver.rejected;
    },
    url: `http://127.0.0.1:${port}/hooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
