// Anthropic's own compaction (context_management mode native, ADR 0019): a compaction request
// (`compaction: {type: "summarize"}` under the `compact-2026-09-04` beta) summarizes the messages
// it is sent and answers with one signed `compaction` block. The block is kept as the item's
// native state and sent back, first in `messages`, in place of what it summarizes, on later
// calls to the same model. Context-management edits (`compact_20260112`, `clear_tool_uses_…`)
// are not used: they compact inside an ordinary call, off the turn's safe boundary.
import type Anthropic from "@anthropic-ai/sdk";
import type { BetaMessageParam, BetaToolUnion } from "@anthropic-ai/sdk/resources/beta/messages";
import type { ContentBlockParam, MessageParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import type { CompactionItem, Message } from "../domain/conversation.js";
import type {
  ModelCallOptions,
  NativeCompaction,
  NativeCompactionRequest,
  NativeCompactionResult,
} from "../ports/model-provider.js";
import { ProviderError } from "../ports/model-provider.js";
import { usageOf } from "./anthropic-usage.js";
import { toProviderError } from "./provider-errors.js";

/** The beta that carries compaction requests and compaction blocks on the Messages API. */
export const COMPACTION_BETA = "compact-2026-09-04";

export interface AnthropicCompactionSetup {
  client: Anthropic;
  defaultModel: string;
  wire(messages: readonly Message[]): { system: string; messages: MessageParam[] };
  tool(definition: NativeCompactionRequest["tools"][number]): Tool;
}

export function createAnthropicCompaction(setup: AnthropicCompactionSetup): NativeCompaction {
  const modelOf = (options: ModelCallOptions): string => options.model ?? setup.defaultModel;
  return { modelOf, compact: (request) => compactOnce(setup, modelOf(request.options), request) };
}

async function compactOnce(
  setup: AnthropicCompactionSetup,
  model: string,
  request: NativeCompactionRequest,
): Promise<NativeCompactionResult> {
  const { system, messages } = setup.wire(request.messages);
  const instructions = request.instructions;
  try {
    const response = await setup.client.beta.messages.create(
      {
        model,
        max_tokens: request.options.maxOutputTokens ?? 4096,
        messages: messages as BetaMessageParam[],
        ...(system === "" ? {} : { system }),
        ...(request.tools.length === 0
          ? {}
          : { tools: request.tools.map(setup.tool) as BetaToolUnion[] }),
        compaction: { type: "summarize", ...(instructions !== undefined && { instructions }) },
        betas: [COMPACTION_BETA],
      },
      { signal: request.signal },
    );
    const block = response.content.find((b) => b.type === "compaction");
    // A block without content is a compaction the server could not make: worth another try.
    if (block?.type !== "compaction" || block.content === null || block.content === "") {
      throw new ProviderError("anthropic: the compaction returned no summary", { retryable: true });
    }
    const { type: _type, ...state } = block;
    return {
      summary: block.content,
      native: JSON.stringify(state),
      model: response.model,
      usage: usageOf(response.usage),
    };
  } catch (err) {
    throw toProviderError("anthropic", err, request.signal);
  }
}

/**
 * A native compaction item as the block it came from, sent back verbatim. The Messages types of
 * the non-beta endpoint do not list it; the call carries the beta header (`needsCompactionBeta`).
 */
export function compactionBlock(item: CompactionItem): ContentBlockParam[] {
  if (item.native === undefined) return [];
  const state = JSON.parse(item.native) as Record<string, unknown>;
  return [{ ...state, type: "compaction" } as unknown as ContentBlockParam];
}

export function needsCompactionBeta(messages: readonly Message[]): boolean {
  return messages.some((m) => m.role === "compaction" && m.native !== undefined);
}
