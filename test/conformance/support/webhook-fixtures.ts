// The webhook laws' shared values: an event of a session, an endpoint draft, a tenant of its own.
import { randomUUID } from "node:crypto";
import { parseSessionId, type SessionId } from "../../../src/domain/ids.js";
import type { WebhookEndpointDraft, WebhookEvent } from "../../../src/domain/webhooks.js";

export const WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** A `turn.completed` event of `sid`. */
export const webhookEvent = (sid: SessionId, id = `msg_${randomUUID()}`): WebhookEvent => ({
  id,
  type: "turn.completed",
  createdAtMs: 1_700_000_000_000,
  data: { session_id: sid, turn_id: "t1" },
});

/** An endpoint of `tenant` (wanting `turn.completed`, or every type with `[]`). */
export const endpointDraft = (
  tenant: string,
  endpointId: string,
  eventTypes: WebhookEndpointDraft["eventTypes"] = ["turn.completed"],
): WebhookEndpointDraft => ({
  tenant,
  endpointId,
  url: "https://hooks.example.com/tether",
  eventTypes,
  secret: WEBHOOK_SECRET,
  createdAtMs: 1_700_000_000_000,
});

/** A session of a tenant of its own, so the tenant's endpoints and their version are the test's. */
export function tenantSession(prefix: string): { tenant: string; sid: SessionId } {
  const tenant = `${prefix}-${randomUUID().slice(0, 8)}`;
  return { tenant, sid: parseSessionId(`${tenant}:s-${randomUUID()}`) };
}
