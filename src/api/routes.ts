// The services this layer serves, registered on a router. The generated service descriptors stay
// behind this module, so the composition root (src/server) never imports src/gen.
import type { ConnectRouter } from "@connectrpc/connect";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { ServerReflection as ReflectionV1 } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { AgentService } from "../gen/tether/v1/agent_service_pb.js";
import { LeaseService } from "../gen/tether/v1/lease_service_pb.js";
import { QuotaService } from "../gen/tether/v1/quota_service_pb.js";
import { QueueService } from "../gen/tether/v1/queue_service_pb.js";
import { ScheduleService } from "../gen/tether/v1/schedule_service_pb.js";
import { SessionService } from "../gen/tether/v1/session_service_pb.js";
import { TurnService } from "../gen/tether/v1/turn_service_pb.js";
import { WebhookService } from "../gen/tether/v1/webhook_service_pb.js";
import type { WebhookStore } from "../ports/webhook-store.js";
import { createWebhookService } from "./webhook-service.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { createAgentService } from "./agent-service.js";
import { ERROR_DETAIL_MESSAGES } from "./errors.js";
import { createHealthService, type HealthState } from "./health-service.js";
import { createLeaseService } from "./lease-service.js";
import { createQueueService } from "./queue-service.js";
import { createQuotaService, type QuotaServiceOptions } from "./quota-service.js";
import { createReflectionServices } from "./reflection-service.js";
import { createScheduleService, type ScheduleServiceOptions } from "./schedule-service.js";
import { createSessionService, type CompactSessionFn } from "./session-service.js";
import { createTurnService, type TurnServiceOptions } from "./turn-service.js";

/** SessionService, AgentService, QueueService and LeaseService over one store. */
export function routeStoreServices(
  router: ConnectRouter,
  store: RuntimeStore,
  compact?: CompactSessionFn,
  maxResponseBytes?: number,
): void {
  const limit = maxResponseBytes === undefined ? {} : { maxResponseBytes };
  router.service(
    SessionService,
    createSessionService({ store, ...(compact && { compact }), ...limit }),
  );
  router.service(AgentService, createAgentService(store));
  router.service(QueueService, createQueueService({ store, ...limit }));
  router.service(LeaseService, createLeaseService({ store }));
}

/** QuotaService: a tenant's quota limits and their use (ADR 0015). */
export function routeQuotaService(router: ConnectRouter, options: QuotaServiceOptions): void {
  router.service(QuotaService, createQuotaService(options));
}

/** ScheduleService: a tenant's schedules (ADR 0020); the replica's poller fires them. */
export function routeScheduleService(router: ConnectRouter, options: ScheduleServiceOptions): void {
  router.service(ScheduleService, createScheduleService(options));
}

/** WebhookService: the tenant's webhook endpoints and deliveries (ADR 0021). */
export function routeWebhookService(router: ConnectRouter, store: WebhookStore): void {
  router.service(WebhookService, createWebhookService(store));
}

export function routeTurnService(router: ConnectRouter, options: TurnServiceOptions): void {
  router.service(TurnService, createTurnService(options));
}

export interface OperationalRoutesOptions {
  health: HealthState;
  /** Ends health watches when the server drains. */
  stopSignal?: AbortSignal | undefined;
}

/**
 * Health and reflection, registered last: every service already on the router is what health
 * reports on and reflection advertises.
 */
export function routeOperationalServices(
  router: ConnectRouter,
  options: OperationalRoutesOptions,
): void {
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
}
