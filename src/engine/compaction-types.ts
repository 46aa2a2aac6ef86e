// The shapes a compaction runs with and ends as, shared by Tether's summarizer (compaction.ts),
// the provider's own compaction (native-compaction.ts) and their retry (summary-retry.ts).
import type { CompactionItem, Message } from "../domain/conversation.js";
import type { ContextPolicy } from "../domain/compaction.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import type { UsageTotals } from "../domain/usage.js";
import type { ModelCallOptions, ModelProvider } from "../ports/model-provider.js";
import type { Sleep } from "../ports/sleep.js";
import type { ToolDefinition } from "../ports/tool-executor.js";
import type { RetryPolicy } from "./retry.js";

export interface CompactionContext {
  provider: ModelProvider;
  retry: RetryPolicy;
  random: () => number;
  sleep: Sleep;
  model: ModelCallOptions;
  signal: AbortSignal;
  emit(event: TurnEvent): void | Promise<void>;
  /** A summary call's usage, as soon as it is known: the turn counts and reports it. */
  reportUsage(usage: UsageTotals, call: number): void | Promise<void>;
}

export interface CompactionInput {
  policy: ContextPolicy;
  /** The whole transcript (history and this turn's messages so far). */
  all: readonly Message[];
  latest: CompactionItem | undefined;
  tokensBefore: number;
  /** Tokens of what is sent besides the messages (system prompt, tool definitions). */
  fixedTokens: number;
  /** Summarize even when clearing alone would bring the estimate under the trigger (on demand). */
  force?: boolean;
  /** The turn's tool definitions: a native compaction request carries them as the turn does. */
  tools?: readonly ToolDefinition[];
}

export type CompactionResult =
  | { kind: "compacted"; item: CompactionItem; usage: UsageTotals }
  | { kind: "nothing" }
  | { kind: "cancelled" }
  | { kind: "failed"; outcome: Extract<TurnOutcome, { kind: "failed" }> };
