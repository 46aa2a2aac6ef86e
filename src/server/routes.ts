// Which services the server routes and through which interceptors. Shared by the real server and
// by tests that use the in-memory router transport, so both exercise the same composition.
import type { CompactSessionFn } from "../api/session-service.js";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { createErrorInterceptor, type ErrorLog } from "../api/errors.js";
import type { HealthState } from "../api/health-service.js";
import { routeOperationalServices, routeQuotaService, routeStoreServices } from "../api/routes.js";
import { createQuotaInterceptor, type QuotaServiceOptions } from "../api/quota-service.js";
import { createStreamQuotaInterceptor } from "../api/stream-quota.js";
import { NO_QUOTAS } from "../domain/quotas.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { createAuthInterceptor } from "./auth.js";
import { createDefaultDeadlineInterceptor } from "./deadlines.js";
import { createMetricsInterceptor, type Metrics } from "./metrics.js";
import type { Tracer } from "../ports/tracer.js";
import { createTracingInterceptor } from "./tracing.js";

/** Registers more services (e.g. TurnService) on the server's router. */
export type RouteHook = (router: ConnectRouter) => void;

export interface TetherRoutesOptions {
  store: RuntimeStore;
  health: HealthState;
  /** Services added by other parts of the process; advertised by health and reflection too. */
  routes?: RouteHook | undefined;
  /** Ends health watches when the server drains. */
  stopSignal?: AbortSignal | undefined;
  /** Tenant quotas (ADR 0015); none when undefined. */
  quotas?: QuotaServiceOptions | undefined;
  /** CompactSession's work (the runtime's); refused without it. */
  compactSession?: CompactSessionFn | undefined;
  /** The largest answer written (TETHER_MAX_MESSAGE_BYTES): larger ones are paged or refused. */
  maxResponseBytes?: number | undefined;
}

export function createTetherRoutes(options: TetherRoutesOptions): RouteHook {
  return (router) => {
    routeStoreServices(router, options.store, options.compactSession, options.maxResponseBytes);
    routeQuotaService(router, options.quotas ?? { store: undefined, config: NO_QUOTAS });
    options.routes?.(router);
    routeOperationalServices(router, { health: options.health, stopSignal: options.stopSignal });
  };
}

export interface TetherInterceptorOptions {
  apiKeys: ReadonlyMap<string, string> | undefined;
  requestTimeoutMs: number;
  metrics?: Metrics | undefined;
  log: ErrorLog;
  /**
   * Refuses submissions while a reject-mode quota is used up, and streams past the tenant's
   * concurrent_streams (inside the error mapping).
   */
  quotas?: QuotaServiceOptions | undefined;
  /** Spans of RPCs (ADR 0013); none when tracing is off. */
  tracer?: Tracer | undefined;
}

/**
 * Outermost first: the RPC's span holds the whole call, metrics see final codes, auth runs
 * before any handler, errors map last.
 */
export function createTetherInterceptors(options: TetherInterceptorOptions): Interceptor[] {
  return [
    ...(options.tracer ? [createTracingInterceptor(options.tracer)] : []),
    ...(options.metrics ? [createMetricsInterceptor(options.metrics)] : []),
    createAuthInterceptor(options.apiKeys),
    createDefaultDeadlineInterceptor(options.requestTimeoutMs),
    createErrorInterceptor(options.log),
    ...(options.quotas ? [createQuotaInterceptor(options.quotas)] : []),
    ...(options.quotas?.streams ? [createStreamQuotaInterceptor(options.quotas.streams)] : []),
  ];
}
