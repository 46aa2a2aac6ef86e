// Compaction at the safe boundary before a model call: first clear old tool results (no model
// call); if the estimate is still over the trigger, summarize everything before the kept tail
// with the turn's own model. The summarizer's input is bounded: a range too large for one call is
// summarized in chunks, then the summaries are summarized, so compaction never fails for size.
import {
  CLEARED_TOOL_RESULT,
  estimateMessageTokens,
  estimateTextTokens,
  type ContextPolicy,
} from "../domain/compaction.js";
import type { CompactionItem, Message } from "../domain/conversation.js";
import { addUsage, ZERO_USAGE, type UsageTotals } from "../domain/usage.js";
import { compactNatively } from "./native-compaction.js";
import type { CompactionContext, CompactionInput, CompactionResult } from "./compaction-types.js";
import { consumeModelCall, type TextForwarder } from "./reconcile.js";
import { withSummaryRetry, type SummaryFailure } from "./summary-retry.js";

export type { CompactionContext, CompactionInput, CompactionResult };

const SILENT: TextForwarder = { forwardText: () => undefined, forwardReasoning: () => undefined };

export async function compact(
  ctx: CompactionContext,
  input: CompactionInput,
): Promise<CompactionResult> {
  const { policy, all, latest } = input;
  const prevCovers = latest?.coversThroughMessage ?? 0;
  const cleared = clearToolResults(policy, all, prevCovers, latest?.clearedToolResults ?? []);
  const shownTokens = (i: number): number => {
    const m = all[i];
    if (m === undefined || m.role === "compaction") return 0;
    if (m.role === "tool" && cleared.has(m.callId)) {
      return estimateMessageTokens({ ...m, content: CLEARED_TOOL_RESULT });
    }
    return estimateMessageTokens(m);
  };
  const saved = savedByClearing(all, prevCovers, cleared, latest?.clearedToolResults ?? []);
  const afterClearing = Math.max(0, input.tokensBefore - saved);
  const base = {
    role: "compaction" as const,
    provider: ctx.provider.name,
    // The item names the model that summarized, also when the turn left it to the server's default.
    model: ctx.model.model ?? ctx.provider.defaultModel ?? "",
    tokensBefore: input.tokensBefore,
    clearedToolResults: [...cleared],
    mode: "summarize" as const,
  };
  if (afterClearing < policy.triggerTokens && input.force !== true) {
    if (saved === 0) return { kind: "nothing" };
    const item: CompactionItem = {
      ...base,
      coversThroughMessage: prevCovers,
      summary: latest?.summary ?? "",
      tokensAfter: afterClearing,
    };
    return { kind: "compacted", item, usage: ZERO_USAGE };
  }
  const covers = tailStart(all, policy.keepRecentTokens, shownTokens);
  if (covers <= prevCovers) {
    if (saved === 0) return { kind: "nothing" };
    const item: CompactionItem = {
      ...base,
      coversThroughMessage: prevCovers,
      summary: latest?.summary ?? "",
      tokensAfter: afterClearing,
    };
    return { kind: "compacted", item, usage: ZERO_USAGE };
  }
  const tokensAfterWith = (summary: string): number => {
    let tokens = input.fixedTokens + estimateTextTokens(summary);
    for (let i = covers; i < all.length; i++) tokens += shownTokens(i);
    return tokens;
  };
  const native = await compactNatively(ctx, input, {
    from: prevCovers,
    covers,
    cleared,
    tokensAfter: tokensAfterWith,
  });
  if (native !== undefined) return native;
  const texts: string[] = [];
  if (latest !== undefined && latest.summary !== "") {
    texts.push(`Summary of what came before:\n${latest.summary}`);
  }
  for (let i = prevCovers; i < covers; i++) {
    const m = all[i];
    if (m !== undefined && m.role !== "compaction") texts.push(render(m, cleared));
  }
  const summarizer = new Summarizer(ctx, policy);
  const summary = await summarizer.summarize(texts);
  if (typeof summary !== "string") return summary;
  const item: CompactionItem = {
    ...base,
    coversThroughMessage: covers,
    summary,
    tokensAfter: tokensAfterWith(summary),
  };
  return { kind: "compacted", item, usage: summarizer.usage };
}

/** Call ids cleared after this compaction: the earlier ones still shown, and the new ones. */
function clearToolResults(
  policy: ContextPolicy,
  all: readonly Message[],
  from: number,
  earlier: readonly string[],
): Set<string> {
  const shown = new Set<string>();
  const results: { callId: string; toolName: string }[] = [];
  for (let i = from; i < all.length; i++) {
    const m = all[i];
    if (m?.role === "tool") {
      shown.add(m.callId);
      results.push(m);
    }
  }
  // Ids of results the summary now covers are dropped: they are no longer sent at all.
  const cleared = new Set(earlier.filter((id) => shown.has(id)));
  const rule = policy.clearToolResults;
  if (rule === undefined) return cleared;
  const excluded = new Set(rule.excludeTools);
  const old = results.slice(0, Math.max(0, results.length - rule.keepLast));
  for (const r of old) if (!excluded.has(r.toolName)) cleared.add(r.callId);
  return cleared;
}

function savedByClearing(
  all: readonly Message[],
  from: number,
  cleared: ReadonlySet<string>,
  earlier: readonly string[],
): number {
  const before = new Set(earlier);
  let saved = 0;
  for (let i = from; i < all.length; i++) {
    const m = all[i];
    if (m?.role !== "tool" || !cleared.has(m.callId) || before.has(m.callId)) continue;
    saved += estimateTextTokens(m.content) - estimateTextTokens(CLEARED_TOOL_RESULT);
  }
  return Math.max(0, saved);
}

/**
 * Where the kept tail starts: the newest messages within `keep` tokens, but at least the last
 * message that is not a tool result (the model must see what it answers), and never starting
 * on a tool result (its call would be summarized away from it).
 */
export function tailStart(
  all: readonly Message[],
  keep: number,
  tokensOf: (i: number) => number,
): number {
  let lastAnchor = -1;
  for (let i = all.length - 1; i >= 0; i--) {
    const role = all[i]?.role;
    if (role !== "tool" && role !== "compaction") {
      lastAnchor = i;
      break;
    }
  }
  if (lastAnchor < 0) return 0;
  let start = all.length;
  let used = 0;
  while (start > 0) {
    const next = used + tokensOf(start - 1);
    if (next > keep) break;
    used = next;
    start--;
  }
  start = Math.min(start, lastAnchor);
  while (start < lastAnchor && isToolOrCompaction(all[start])) start++;
  return start;
}

const isToolOrCompaction = (m: Message | undefined): boolean =>
  m?.role === "tool" || m?.role === "compaction";

function render(m: Message, cleared: ReadonlySet<string>): string {
  switch (m.role) {
    case "system":
      return `System: ${m.text}`;
    case "user":
      return `User: ${m.content.map((c) => (c.type === "text" ? c.text : "[image]")).join("\n")}`;
    case "assistant":
      return `Assistant: ${m.parts
        .map((p) => {
          if (p.type === "tool_call") return `[called ${p.toolName}(${p.argumentsJson})]`;
          return p.type === "reasoning" ? "" : p.text;
        })
        .filter((t) => t !== "")
        .join("\n")}`;
    case "tool":
      return `Tool ${m.toolName} result: ${cleared.has(m.callId) ? CLEARED_TOOL_RESULT : m.content}`;
    case "compaction":
      return "";
  }
}

/** Summary calls under the provider retry policy, over input no larger than half the trigger. */
class Summarizer {
  usage: UsageTotals = ZERO_USAGE;
  private calls = 0;
  private readonly chunkChars: number;

  constructor(
    private readonly ctx: CompactionContext,
    private readonly policy: ContextPolicy,
  ) {
    // Half the trigger for the range leaves room for the instructions and the summary itself.
    this.chunkChars = Math.floor(policy.triggerTokens / 2) * 4;
  }

  /** One summary of `texts` (in order), or how the compaction ended instead. */
  async summarize(
    texts: readonly string[],
  ): Promise<string | Exclude<CompactionResult, { kind: "compacted" | "nothing" }>> {
    let parts = texts.map((t) =>
      t.length > this.chunkChars ? `${t.slice(0, this.chunkChars)} [cut]` : t,
    );
    let framing = "the conversation";
    for (;;) {
      const chunks = this.chunk(parts);
      const summaries: string[] = [];
      for (const chunk of chunks) {
        const s = await this.call(
          chunk.join("\n\n"),
          chunks.length > 1 ? `part of ${framing}` : framing,
        );
        if (typeof s !== "string") return s;
        summaries.push(s);
      }
      if (summaries.length === 1) return summaries[0] ?? "";
      parts = summaries;
      framing = "consecutive summaries of parts of the conversation, oldest first";
    }
  }

  private chunk(parts: readonly string[]): string[][] {
    const chunks: string[][] = [];
    let current: string[] = [];
    let size = 0;
    for (const p of parts) {
      if (current.length > 0 && size + p.length > this.chunkChars) {
        chunks.push(current);
        current = [];
        size = 0;
      }
      current.push(p);
      size += p.length + 2;
    }
    if (current.length > 0) chunks.push(current);
    return chunks;
  }

  private async call(
    text: string,
    what: string,
  ): Promise<string | Exclude<CompactionResult, { kind: "compacted" | "nothing" }>> {
    const { ctx } = this;
    const { responseFormat: _unused, ...options } = ctx.model;
    const request = {
      messages: [
        { role: "system" as const, text: "You write summaries of conversations." },
        {
          role: "user" as const,
          content: [
            {
              type: "text" as const,
              text: `Below is ${what}.\n\n${text}\n\n${this.policy.instructions}`,
            },
          ],
        },
      ],
      tools: [],
      // A summary far smaller than the trigger is what makes room; an eighth of it is plenty.
      options: {
        ...options,
        maxOutputTokens: Math.max(256, Math.floor(this.policy.triggerTokens / 8)),
      },
      signal: ctx.signal,
    };
    const iteration = ++this.calls;
    const result = await withSummaryRetry(ctx, iteration, async () => {
      const response = await consumeModelCall(ctx.provider.call(request), SILENT, {
        forwardedText: "",
      });
      if (ctx.signal.aborted) return response.text;
      this.usage = addUsage(this.usage, response.usage);
      await ctx.reportUsage(response.usage, iteration);
      return response.text;
    });
    return typeof result === "string" ? result : withoutRefusal(result);
  }
}

function withoutRefusal(
  failure: SummaryFailure,
): Exclude<CompactionResult, { kind: "compacted" | "nothing" }> {
  return failure.kind === "failed" ? { kind: "failed", outcome: failure.outcome } : failure;
}
