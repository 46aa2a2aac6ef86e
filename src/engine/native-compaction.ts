// Mode native (and auto): the provider's own compaction where it has one (ADR 0019). The range
// before the kept tail is sent to the provider's compaction request, which returns its own state
// (Anthropic: a signed compaction block) and the summary's text; the item keeps both, so the
// provider and model that made it get the state back and any other gets the text. A range too
// large for one request goes in steps, each adopting the state of the one before, cut only where
// a user message starts (never between a tool call and its result). Undefined: use summarize.
import {
  CLEARED_TOOL_RESULT,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  estimateMessageTokens,
  summaryMessage,
} from "../domain/compaction.js";
import type { CompactionItem, Message } from "../domain/conversation.js";
import { addUsage, ZERO_USAGE, type UsageTotals } from "../domain/usage.js";
import type { NativeCompaction, NativeCompactionResult } from "../ports/model-provider.js";
import type { CompactionContext, CompactionInput, CompactionResult } from "./compaction-types.js";
import { nativeMatches, type NativeTarget } from "./provider-view.js";
import { isSummaryFailure, withSummaryRetry } from "./summary-retry.js";

export interface NativeRange {
  /** The covered range: [from, covers) of the transcript. */
  from: number;
  covers: number;
  cleared: ReadonlySet<string>;
  /** The item's fields besides what the provider's compaction decides. */
  tokensAfter(summary: string): number;
}

export async function compactNatively(
  ctx: CompactionContext,
  input: CompactionInput,
  range: NativeRange,
): Promise<CompactionResult | undefined> {
  const native = ctx.provider.nativeCompaction;
  const { policy, latest } = input;
  if (native === undefined || policy.mode === "summarize") return undefined;
  const target: NativeTarget = { provider: ctx.provider.name, model: native.modelOf(ctx.model) };
  let lead: Message | undefined;
  if (latest !== undefined && nativeMatches(latest, target)) lead = latest;
  else if (latest !== undefined && latest.summary !== "") lead = summaryMessage(latest.summary);
  // One request at most the trigger (what the turn itself may send), less what leads it: the
  // earlier summary, or a step's own, whose output is capped at an eighth of the trigger.
  const leadTokens = Math.max(
    lead === undefined ? 0 : estimateMessageTokens(lead),
    Math.floor(policy.triggerTokens / 8) + 4,
  );
  const room = policy.triggerTokens - leadTokens;
  const chunks = chunksOf(input.all, range, room);
  if (chunks === undefined) return undefined;
  let usage: UsageTotals = ZERO_USAGE;
  let made: NativeCompactionResult | undefined;
  for (const [i, chunk] of chunks.entries()) {
    const result = await step(ctx, native, input, [...(lead ? [lead] : []), ...chunk], i + 1);
    if (isSummaryFailure(result)) {
      // auto: a provider that refuses its own compaction here still gets a summary, Tether's.
      if (result.kind === "failed" && result.refused && policy.mode === "auto") return undefined;
      return result.kind === "failed" ? { kind: "failed", outcome: result.outcome } : result;
    }
    usage = addUsage(usage, result.usage);
    await ctx.reportUsage(result.usage, i + 1);
    made = result;
    lead = itemOf(result, target, range, input);
  }
  if (made === undefined) return undefined;
  return { kind: "compacted", item: itemOf(made, target, range, input), usage };
}

function step(
  ctx: CompactionContext,
  native: NativeCompaction,
  input: CompactionInput,
  messages: Message[],
  iteration: number,
) {
  const { responseFormat: _unused, ...options } = ctx.model;
  const instructions = input.policy.instructions;
  return withSummaryRetry(ctx, iteration, () =>
    native.compact({
      messages,
      tools: input.tools ?? [],
      options: {
        ...options,
        maxOutputTokens: Math.max(256, Math.floor(input.policy.triggerTokens / 8)),
      },
      // The provider's own prompt unless the policy replaced Tether's default.
      instructions: instructions === DEFAULT_SUMMARY_INSTRUCTIONS ? undefined : instructions,
      signal: ctx.signal,
    }),
  );
}

function itemOf(
  made: NativeCompactionResult,
  target: NativeTarget,
  range: NativeRange,
  input: CompactionInput,
): CompactionItem {
  return {
    role: "compaction",
    coversThroughMessage: range.covers,
    summary: made.summary,
    provider: target.provider,
    model: made.model,
    tokensBefore: input.tokensBefore,
    tokensAfter: range.tokensAfter(made.summary),
    clearedToolResults: [...range.cleared],
    mode: "native",
    native: made.native,
  };
}

/**
 * The covered messages as providers see them, in requests of at most `room` tokens, each cut
 * where a user message starts; undefined when one exchange alone is larger than that.
 */
function chunksOf(
  all: readonly Message[],
  range: NativeRange,
  room: number,
): Message[][] | undefined {
  const units: { messages: Message[]; tokens: number }[] = [];
  for (let i = range.from; i < range.covers; i++) {
    const m = all[i];
    if (m === undefined || m.role === "compaction") continue;
    const shown: Message =
      m.role === "tool" && range.cleared.has(m.callId) ? { ...m, content: CLEARED_TOOL_RESULT } : m;
    const last = units.at(-1);
    if (last === undefined || m.role === "user") {
      units.push({ messages: [shown], tokens: estimateMessageTokens(shown) });
    } else {
      last.messages.push(shown);
      last.tokens += estimateMessageTokens(shown);
    }
  }
  if (units.length === 0 || units.some((u) => u.tokens > room)) return undefined;
  const chunks: Message[][] = [];
  let size = room;
  for (const unit of units) {
    if (size + unit.tokens > room) {
      chunks.push([]);
      size = 0;
    }
    chunks.at(-1)?.push(...unit.messages);
    size += unit.tokens;
  }
  return chunks;
}
