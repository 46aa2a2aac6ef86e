// The background room: what runs without a caller. The sweep that recovers sessions a dead holder
// left (sweeper.ts), the scheduler and the fire of one schedule (scheduler.ts, schedule-fire.ts),
// and the webhook deliverer that drains the outboxes through the WebhookSend port (the HTTP
// sender is an adapter, src/webhooks/). It drives sessions through the session room and builds
// a fired turn's input with the turn room; nothing in the runtime imports it but the facade.
export { startSweeper, type SingletonGuard, type Sweeper, type SweeperOptions } from "./sweeper.js";
export { createScheduleFirer, type ScheduleFirer } from "./schedule-fire.js";
export { startScheduler, type Scheduler, type SchedulerOptions } from "./scheduler.js";
export {
  createWebhookDeliverer,
  replayDelivery,
  type WebhookDeliverer,
  type WebhookDelivererOptions,
} from "./webhook-deliverer.js";
