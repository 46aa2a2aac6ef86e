// The turn engine's public surface.
export { createTurnEngine } from "./turn-engine.js";
export { closeTurn, type TurnClosure } from "./turn-closure.js";
export type {
  TurnEngine,
  TurnEngineOptions,
  TurnProgress,
  TurnRequest,
  TurnResult,
} from "./turn-engine.js";
export type { ToolCallRecord } from "./tool-dispatch.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";
export { compact, type CompactionContext, type CompactionResult } from "./compaction.js";
export { nativeTarget, ProviderView } from "./provider-view.js";
