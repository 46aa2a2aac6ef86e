// Operator-declared webhook endpoints (TETHER_WEBHOOK_ENDPOINTS, ADR 0021) are written to the
// store before the server serves. Replicas start at once, so this is built from the store's own
// atomic steps: create, and when the id is taken (by an earlier start or a replica racing this
// one) update url, event types and secret. Both replicas write the same values, so whichever
// step lands last leaves the endpoint as configured.
import type { WebhookEndpointStore } from "../ports/webhook-store.js";
import type { RuntimeLogger } from "../runtime/index.js";
import type { ConfiguredWebhookEndpoint } from "./webhook-config.js";

export type AppliedEndpoint = "created" | "updated";

async function applyOne(
  store: WebhookEndpointStore,
  e: ConfiguredWebhookEndpoint,
  nowMs: number,
): Promise<AppliedEndpoint> {
  const created = await store.createEndpoint({
    tenant: e.tenant,
    endpointId: e.endpointId,
    url: e.url,
    eventTypes: e.eventTypes,
    secret: e.secret,
    createdAtMs: nowMs,
  });
  if (created) return "created";
  const update = { url: e.url, eventTypes: e.eventTypes, secret: e.secret };
  const updated = await store.updateEndpoint({
    tenant: e.tenant,
    endpointId: e.endpointId,
    ...update,
  });
  if (updated) return "updated";
  // Deleted between the two steps (through the API, or by an operator): create it again.
  const again = await store.createEndpoint({
    tenant: e.tenant,
    endpointId: e.endpointId,
    ...update,
    createdAtMs: nowMs,
  });
  if (again) return "created";
  throw new Error(
    `webhook endpoint ${e.tenant}/${e.endpointId} changed under every attempt to apply it`,
  );
}

/**
 * Creates or updates every configured endpoint, in order. A disabled endpoint stays disabled
 * (the update does not touch the flag): re-enabling is a decision made through the API.
 */
export async function applyConfiguredEndpoints(
  store: WebhookEndpointStore,
  endpoints: readonly ConfiguredWebhookEndpoint[],
  logger: RuntimeLogger,
  nowMs = Date.now(),
): Promise<AppliedEndpoint[]> {
  const results: AppliedEndpoint[] = [];
  for (const e of endpoints) {
    const result = await applyOne(store, e, nowMs);
    results.push(result);
    logger.info(
      {
        tenant: e.tenant,
        endpointId: e.endpointId,
        url: e.url,
        eventTypes: e.eventTypes.length === 0 ? "all" : e.eventTypes,
        secretEnv: e.secretEnv,
        result,
      },
      `webhook endpoint ${e.tenant}/${e.endpointId} ${result} from TETHER_WEBHOOK_ENDPOINTS`,
    );
  }
  return results;
}

export interface DeclaredEndpoints {
  /** Resolves once every declared endpoint is applied (at once, or after retries). */
  applied: Promise<void>;
  /** Stops retrying (shutdown). */
  stop(): void;
}

/**
 * Applies the declared endpoints before serving. A replica whose store does not answer at start
 * stays up NOT_SERVING (build-store.ts), so a failure here does not end the process: it is
 * logged and the whole list is applied again every `retryMs` until it succeeds.
 */
export async function applyDeclaredEndpoints(
  store: WebhookEndpointStore,
  endpoints: readonly ConfiguredWebhookEndpoint[],
  logger: RuntimeLogger,
  retryMs = 1_000,
): Promise<DeclaredEndpoints> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let settle: () => void = () => undefined;
  const applied = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const attempt = async (): Promise<void> => {
    try {
      await applyConfiguredEndpoints(store, endpoints, logger);
      settle();
    } catch (error) {
      if (stopped) return;
      logger.warn(
        { err: error, retryMs },
        "declared webhook endpoints not applied (store unreachable?); retrying",
      );
      timer = setTimeout(() => void attempt(), retryMs);
      timer.unref();
    }
  };
  if (endpoints.length === 0) settle();
  else await attempt();
  return {
    applied,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
