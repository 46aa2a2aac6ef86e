// Which services the server routes and through which interceptors. Shared by the real server and
// by tests that use the in-memory router transport, so both exercise the same composition.
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { createErrorInterceptor, ERROR_DETAIL_MESSAGES, type ErrorLog } from "../api/errors.js";
import { createHealthService, type HealthState } from "../api/health-service.js";
import { createLeaseService } from "../api/lease-service.js";
import { createQueueService } from "../api/queue-service.js";
import { createReflectionServices } from "../api/reflection-service.js";
import { createSessionService } from "../api/session-service.js";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { ServerReflection as ReflectionV1 } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { LeaseService } from "../gen/tether/v1/lease_service_pb.js";
import { QueueService } from "../gen/tether/v1/queue_service_pb.js";
import { SessionService } from "../gen/tether/v1/session_service_pb.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { createAuthInterceptor } from "./auth.js";
import { createDefaultDeadlineInterceptor } from "./deadlines.js";
import { createMetricsInterceptor, type Metrics } from "./metrics.js";

/** Registers more services (e.g. TurnService) on the server's router. */
export type RouteHook = (router: ConnectRouter) => void;

export interface TetherRoutesOptions {
  store: RuntimeStore;
  health: HealthState;
  /** Services added by other parts of the process; advertised by health and reflection too. */
  routes?: RouteHook | undefined;
  /** Ends health watches when the server drains. */
  stopSignal?: AbortSignal | undefined;
}

export function createTetherRoutes(options: TetherRoutesOptions): RouteHook {
  return (router) => {
    router.service(SessionService, createSessionService({ store: options.store }));
    router.service(QueueService, createQueueService({ store: options.store }));
    router.service(LeaseService, createLeaseService({ store: options.store }));
    options.routes?.(router);
    // Everything registered so far is what health reports on and reflection advertises.
    const services = [
      ...new Map(router.handlers.map((h) => [h.service.typeName, h.service])).values(),
    ];
    for (const service of services) {
      options.health.set(service.typeName, options.health.get("") ?? 0);
    }
    router.service(
      Health,
      createHealthService(
        options.health,
        options.stopSignal ? { stopSignal: options.stopSignal } : {},
      ),
    );
    const reflection = createReflectionServices([...services, Health], ERROR_DETAIL_MESSAGES);
    router.service(ReflectionV1, reflection.v1);
    router.service(ReflectionV1alpha, reflection.v1alpha);
  };
}

export interface TetherInterceptorOptions {
  apiKeys: ReadonlyMap<string, string> | undefined;
  requestTimeoutMs: number;
  metrics?: Metrics | undefined;
  log: ErrorLog;
}

/** Outermost first: metrics see final codes, auth runs before any handler, errors map last. */
export function createTetherInterceptors(options: TetherInterceptorOptions): Interceptor[] {
  return [
    ...(options.metrics ? [createMetricsInterceptor(options.metrics)] : []),
    createAuthInterceptor(options.apiKeys),
    createDefaultDeadlineInterceptor(options.requestTimeoutMs),
    createErrorInterceptor(options.log),
  ];
}
