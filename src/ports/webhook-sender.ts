// How the runtime's webhook deliverer sends one event to one endpoint (ADR 0021): outbound HTTP
// and DNS are an adapter's (src/webhooks/webhook-sender.ts), so the runtime holds no network code.
import type { WebhookEndpoint, WebhookEvent } from "../domain/webhooks.js";

export interface SendReport {
  ok: boolean;
  /** HTTP status, 0 when no response came. */
  status: number;
  error: string;
}

export type WebhookSend = (endpoint: WebhookEndpoint, event: WebhookEvent) => Promise<SendReport>;
