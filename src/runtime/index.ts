// The runtime's public surface for the API and the composition root: the facade (runtime.ts),
// what it is built from (deps.ts), and the few pieces of the rooms the edge needs. Inside, six
// rooms (ADR 0012): stream/ (what a client sees), observation/ (traces and metrics of calls),
// limits/ (quotas and budgets), turn/ (one turn), session/ (who drives a session) and
// background/ (what runs without a caller).
export {
  createTetherRuntime,
  type BusyStrategy,
  type DrainReport,
  type StreamTurnCommand,
  type SubmittedTurnInput,
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
export { CURSOR_SCALE, createSessionBus, isValidCursor, type SessionBus } from "./stream/index.js";
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
  parkedBatch,
  type ResponseFormat,
  type TranscriptCache,
  type TurnSettings,
} from "./turn/index.js";
export {
  createScheduleFirer,
  createWebhookDeliverer,
  replayDelivery,
  startScheduler,
  startSweeper,
  type ScheduleFirer,
  type Scheduler,
  type SchedulerOptions,
  type SingletonGuard,
  type Sweeper,
  type WebhookDeliverer,
  type WebhookDelivererOptions,
} from "./background/index.js";
export type { BudgetPolicy } from "./limits/index.js";
