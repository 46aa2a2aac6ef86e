// Wires webhooks (ADR 0021): the runtime's outbox hint (which also nudges this replica's
// deliverer, so a delivery follows its commit without waiting for a poll), the leased deliverer
// with its sender, the WebhookService route, and two counters on the metrics registry.
import type { ConnectRouter } from "@connectrpc/connect";
import { Counter, type Registry } from "prom-client";
import { routeWebhookService } from "../api/routes.js";
import { systemClock } from "../ports/clock.js";
import type { WebhookStore } from "../ports/webhook-store.js";
import {
  createOutboxHints,
  createWebhookDeliverer,
  type RuntimeDeps,
  type RuntimeLogger,
  type SchedulerOptions,
  type WebhookDeliverer,
} from "../runtime/index.js";
import type { SessionId } from "../domain/ids.js";
import { schedulePausedEvent } from "../domain/webhooks.js";
import { createWebhookSender } from "../webhooks/webhook-sender.js";
import type { WebhookConfig } from "./webhook-config.js";

export interface BuiltWebhooks {
  /** For RuntimeDeps.webhooks; undefined when webhooks are off. */
  hook: RuntimeDeps["webhooks"];
  deliverer: WebhookDeliverer | undefined;
  routes(router: ConnectRouter): void;
  /** For the scheduler: writes a pause's `schedule.paused` event; undefined when off. */
  announceSchedulePause: SchedulerOptions["announcePause"];
}

function counters(registry: Registry | undefined) {
  if (!registry) return {};
  const attempts = new Counter({
    name: "tether_webhook_attempts_total",
    help: "Webhook delivery attempts by result (delivered, failed)",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const disabled = new Counter({
    name: "tether_webhook_endpoints_disabled_total",
    help: "Webhook endpoints disabled after consecutive failed deliveries",
    registers: [registry],
  });
  return {
    onAttempt: (result: string) => attempts.inc({ result }),
    onDisabled: () => disabled.inc(),
  };
}

export function buildWebhooks(
  config: WebhookConfig,
  store: WebhookStore,
  logger: RuntimeLogger,
  registry?: Registry,
): BuiltWebhooks {
  const routes = (router: ConnectRouter) => routeWebhookService(router, store);
  if (!config.enabled) {
    return { hook: undefined, deliverer: undefined, routes, announceSchedulePause: undefined };
  }
  const deliverer = createWebhookDeliverer({
    store,
    send: createWebhookSender({ allowPrivate: config.allowPrivate, timeoutMs: config.timeoutMs }),
    clock: systemClock,
    logger,
    pollMs: config.pollMs,
    leaseMs: config.leaseMs,
    ...counters(registry),
  });
  deliverer.start();
  // A row's writer lost before its note leaves the row due one delivery lease later. Where the
  // store folds the outbox, a commit claims its rows for this deliverer in its own step.
  const hook = createOutboxHints(
    store,
    systemClock,
    config.leaseMs,
    (id) => deliverer.nudge(id),
    deliverer,
  );
  return {
    hook,
    deliverer,
    routes,
    async announceSchedulePause(ref, reason, occurrenceMs) {
      const now = systemClock.nowMs();
      const paused = schedulePausedEvent(ref.tenant, ref.scheduleId, reason, occurrenceMs, now);
      // The outbox id is not a session's, but it is one in the store's eyes: tenant-prefixed.
      const outboxId = paused.outboxId as SessionId;
      // Where the store keeps the hint in its steps, the write lists the outbox (due at once)
      // with the row: only the nudge is left (ADR 0021 "The hint dropped in the settle").
      if (store.keepsOutboxHint === true) {
        await store.enqueueWebhookEvent(outboxId, paused.event);
        deliverer.nudge(outboxId);
        return;
      }
      await hook.expect(outboxId);
      await store.enqueueWebhookEvent(outboxId, paused.event);
      await hook.written(outboxId);
    },
  };
}
