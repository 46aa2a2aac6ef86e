// Decides, at the safe boundary before each model call, whether the context is compacted: keeps
// the token estimate (the provider's reported prompt of the last call plus four characters a
// token for what was appended since) and runs compaction.ts when it reaches the trigger.
import { estimateTextTokens, estimateTokens, type ContextPolicy } from "../domain/compaction.js";
import type { Message } from "../domain/conversation.js";
import { addUsage, type UsageTotals } from "../domain/usage.js";
import type { ModelCallOptions } from "../ports/model-provider.js";
import type { BudgetGuard } from "../ports/budget-guard.js";
import type { ToolDefinition } from "../ports/tool-executor.js";
import type { ModelCallContext } from "./model-call.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import { contextCompacted } from "../domain/turn-events.js";
import { compact, type CompactionContext } from "./compaction.js";
import type { ProviderView } from "./provider-view.js";

/** The turn a compaction runs in: its provider and retry policy, its events, its usage. */
export interface CompactingTurn extends ModelCallContext {
  append(message: Message): void;
  /** The turn's running usage: summary calls are added to it. */
  total: UsageTotals;
}

export interface KeeperConfig {
  contextPolicy?: ContextPolicy | undefined;
  model: ModelCallOptions;
  definitions: readonly ToolDefinition[];
  systemPrompt: string | undefined;
  /** Summary calls are charged like any model call. */
  budgetGuard?: BudgetGuard | undefined;
}

const promptOf = (u: UsageTotals): number => u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;

const CANCELLED: TurnOutcome = { kind: "stopped", reason: "cancelled" };

export class ContextKeeper {
  /** The last call's prompt as the provider counted it, and how many view messages it had. */
  private reported: { tokens: number; viewLength: number } | undefined;
  /** At the last call: the turn's prompt tokens so far and the view's length. */
  private sent: { prompt: number; viewLength: number } | undefined;
  private readonly policy: ContextPolicy | undefined;
  private readonly toolTokens: number;
  private readonly systemTokens: number;

  constructor(private readonly config: KeeperConfig) {
    const { definitions, systemPrompt } = config;
    this.policy = config.contextPolicy;
    this.toolTokens =
      definitions.length === 0 ? 0 : estimateTextTokens(JSON.stringify(definitions));
    this.systemTokens = estimateTextTokens(systemPrompt ?? "");
  }

  /** What the last call's prompt was: the growth of the turn's prompt tokens since it was made. */
  private learn(total: UsageTotals): void {
    const sent = this.sent;
    const prompt = sent === undefined ? 0 : promptOf(total) - sent.prompt;
    this.reported =
      sent !== undefined && prompt > 0
        ? { tokens: prompt, viewLength: sent.viewLength }
        : undefined;
  }

  /** Estimated input tokens of a call over the view now. */
  estimate(view: ProviderView): number {
    const r = this.reported;
    if (r === undefined || r.viewLength > view.messages.length) {
      return this.toolTokens + estimateTokens(view.messages);
    }
    return r.tokens + estimateTokens(view.messages.slice(r.viewLength));
  }

  /**
   * Compacts when the estimate reached the trigger: the item goes to `append` (so it commits with
   * the turn) and the turn hears `context_compacted`. An outcome when the turn must end instead.
   */
  async beforeCall(
    view: ProviderView,
    turn: CompactingTurn,
    signal: AbortSignal,
  ): Promise<TurnOutcome | undefined> {
    const policy = this.policy;
    if (policy === undefined) return undefined;
    this.learn(turn.total);
    const outcome = await this.compactIfOver(policy, view, turn, signal);
    this.sent = { prompt: promptOf(turn.total), viewLength: view.messages.length };
    return outcome;
  }

  private async compactIfOver(
    policy: ContextPolicy,
    view: ProviderView,
    turn: CompactingTurn,
    signal: AbortSignal,
  ): Promise<TurnOutcome | undefined> {
    const tokensBefore = this.estimate(view);
    if (tokensBefore < policy.triggerTokens) return undefined;
    const ctx: CompactionContext = {
      provider: turn.provider,
      retry: turn.retry,
      random: turn.random,
      sleep: turn.sleep,
      model: this.config.model,
      signal,
      emit: (event) => turn.emit(event),
      reportUsage: async (usage, call) => {
        const total = (turn.total = addUsage(turn.total, usage));
        const charged = this.config.budgetGuard?.afterModelCall(usage, total);
        if (charged !== undefined) await charged;
        await turn.emit({ type: "usage", iteration: call, usage, total, purpose: "compaction" });
      },
    };
    const result = await compact(ctx, {
      policy,
      all: view.all,
      latest: view.latestCompaction(),
      tokensBefore,
      fixedTokens: this.toolTokens + this.systemTokens,
      tools: this.config.definitions,
    });
    if (result.kind === "cancelled") return CANCELLED;
    if (result.kind === "failed") return result.outcome;
    if (result.kind === "nothing") return undefined;
    const { item } = result;
    turn.append(item);
    // The view changed shape: the next estimate starts from the text, not the last report.
    this.reported = undefined;
    await ctx.emit(contextCompacted(item));
    return undefined;
  }
}
