// The runtime's public surface for the API and the composition root: the facade (runtime.ts),
// what it is built from (deps.ts), and the few pieces of the rooms the edge needs. Inside, three
// rooms: turn/ (one turn), session/ (who drives a session), stream/ (what a client sees).
export {
  createTetherRuntime,
  type BusyStrategy,
  type DrainReport,
  type StreamTurnCommand,
  type TetherRuntime,
} from "./runtime.js";
export {
  createOutboxHints,
  silentLogger,
  type ModelCallReport,
  type OutboxHints,
  type QuotaRefusalPoint,
  type RuntimeDeps,
  type RuntimeLogger,
  type RuntimeMetrics,
  type TurnReport,
} from "./deps.js";
export { createSessionBus, isValidCursor, type SessionBus } from "./stream/index.js";
export {
  checkResponseFormat,
  compileUserSchema,
  parseUserSchema,
  USER_SCHEMA_LIMITS,
  type SchemaCheck,
  createTranscriptCache,
  decodeCommitted,
  RESPONSE_FORMAT_NAME,
  agentBindingPatch,
  type ResponseFormat,
  type TranscriptCache,
  type TurnSettings,
  type BudgetPolicy,
} from "./turn/index.js";
export { startSweeper, type SingletonGuard, type Sweeper } from "./session/index.js";
export { createScheduleFirer, type ScheduleFirer } from "./schedule-fire.js";
export { startScheduler, type Scheduler, type SchedulerOptions } from "./scheduler.js";
export {
  createWebhookDeliverer,
  replayDelivery,
  type WebhookDeliverer,
  type WebhookDelivererOptions,
} from "./webhook-deliverer.js";
export {
  createWebhookSender,
  isPrivateAddress,
  webhookBody,
  type SendReport,
  type WebhookSend,
} from "./webhook-sender.js";
