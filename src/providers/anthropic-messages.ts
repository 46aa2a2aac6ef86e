// Anthropic Messages through the official SDK: streaming text, tool use assembled from JSON
// fragments, thinking, and usage with cache reads and writes.
import Anthropic from "@anthropic-ai/sdk";
import type {
  ContentBlockParam,
  MessageParam,
  RawMessageStreamEvent,
  Tool,
} from "@anthropic-ai/sdk/resources/messages";
import type { Message, OutputPart } from "../domain/conversation.js";
import { reasoningDelta, textDelta } from "../domain/turn-events.js";
import type { UsageTotals } from "../domain/usage.js";
import type {
  ModelCall,
  ModelProvider,
  ModelRequest,
  ModelResponse,
} from "../ports/model-provider.js";
import type { ToolDefinition } from "../ports/tool-executor.js";
import { ProviderError } from "../ports/model-provider.js";
import { usageOf } from "./anthropic-usage.js";
import { toBase64, toProviderError } from "./provider-errors.js";
import {
  COMPACTION_BETA,
  compactionBlock,
  createAnthropicCompaction,
  needsCompactionBeta,
} from "./anthropic-compaction.js";

export interface AnthropicMessagesProviderOptions {
  apiKey: string;
  baseURL?: string;
  defaultModel: string;
  /** The API requires a ceiling; used when a call sets none. Default 4096. */
  defaultMaxOutputTokens?: number;
  timeoutMs?: number;
  defaultHeaders?: Record<string, string>;
}

export function createAnthropicMessagesProvider(
  options: AnthropicMessagesProviderOptions,
): ModelProvider {
  // The engine owns retries; the SDK makes one try.
  const client = new Anthropic({
    apiKey: options.apiKey,
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    maxRetries: 0,
    timeout: options.timeoutMs ?? 600_000,
    ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: options.defaultHeaders }),
  });
  return {
    name: "anthropic-messages",
    capabilities: { images: true },
    defaultModel: options.defaultModel,
    call: (request) => stream(client, options, request),
    nativeCompaction: createAnthropicCompaction({
      client,
      defaultModel: options.defaultModel,
      wire: toWireMessages,
      tool: toWireTool,
    }),
  };
}

type Block =
  | { kind: "text"; text: string }
  | { kind: "tool_use"; id: string; name: string; json: string }
  | { kind: "thinking"; text: string }
  | { kind: "other" };

async function* stream(
  client: Anthropic,
  options: AnthropicMessagesProviderOptions,
  request: ModelRequest,
): ModelCall {
  const { signal } = request;
  const blocks = new Map<number, Block>();
  let usage: UsageTotals | undefined;
  let stopReason: string | null | undefined;
  let stopped = false;
  let answeredBy: string | undefined;
  const { system, messages } = toWireMessages(request.messages);
  try {
    const events = await client.messages.create(
      {
        model: request.options.model ?? options.defaultModel,
        max_tokens: request.options.maxOutputTokens ?? options.defaultMaxOutputTokens ?? 4096,
        messages,
        ...(system === "" ? {} : { system }),
        ...(request.tools.length === 0 ? {} : { tools: request.tools.map(toWireTool) }),
        ...(request.options.temperature === undefined
          ? {}
          : { temperature: request.options.temperature }),
        ...(request.options.responseFormat && {
          output_config: {
            format: { type: "json_schema" as const, schema: request.options.responseFormat.schema },
          },
        }),
        stream: true,
      },
      // A native compaction block in the conversation needs its beta.
      needsCompactionBeta(request.messages)
        ? { signal, headers: { "anthropic-beta": COMPACTION_BETA } }
        : { signal },
    );
    for await (const event of events) {
      if (event.type === "message_delta") stopReason = event.delta.stop_reason;
      if (event.type === "message_stop") stopped = true;
      if (event.type === "message_start" && event.message.model !== "") {
        answeredBy = event.message.model;
      }
      const out = onEvent(event, blocks, usage);
      if (out.usage !== undefined) {
        usage = out.usage;
        yield { type: "usage", usage };
      }
      if (out.text !== undefined) yield textDelta(out.text);
      if (out.reasoning !== undefined) yield reasoningDelta(out.reasoning);
      if (out.part !== undefined) yield { type: "part", part: out.part };
    }
    // The SDK ends the iteration quietly on abort; the port promises a rejection.
    if (signal.aborted) throw new Error("aborted");
    // Every complete message ends with message_stop; a body that ends without it was cut.
    if (!stopped) {
      throw new ProviderError("anthropic: the stream ended early, before message_stop");
    }
  } catch (err) {
    throw toProviderError("anthropic", err, signal);
  }

  const parts: OutputPart[] = [];
  let fullText = "";
  for (const [, b] of [...blocks.entries()].sort(([a], [z]) => a - z)) {
    if (b.kind === "text" && b.text !== "") {
      parts.push({ type: "text", text: b.text });
      fullText += b.text;
    } else if (b.kind === "thinking") parts.push({ type: "reasoning", text: b.text });
    else if (b.kind === "tool_use") {
      parts.push({ type: "tool_call", callId: b.id, toolName: b.name, argumentsJson: b.json });
    }
  }
  const response: ModelResponse = { fullText, parts };
  if (usage !== undefined) response.usage = usage;
  if (stopReason === "max_tokens") response.truncated = true;
  if (answeredBy !== undefined) response.model = answeredBy;
  return response;
}

interface EventOutput {
  text?: string;
  reasoning?: string;
  part?: OutputPart;
  usage?: UsageTotals;
}

function onEvent(
  event: RawMessageStreamEvent,
  blocks: Map<number, Block>,
  usage: UsageTotals | undefined,
): EventOutput {
  switch (event.type) {
    case "message_start":
      return { usage: usageOf(event.message.usage) };
    case "message_delta": {
      // Cumulative counts; fields the delta leaves null keep their message_start value.
      const u = event.usage;
      const base = usage ?? {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      };
      return {
        usage: {
          inputTokens: u.input_tokens ?? base.inputTokens,
          outputTokens: u.output_tokens,
          cacheReadTokens: u.cache_read_input_tokens ?? base.cacheReadTokens,
          cacheWriteTokens: u.cache_creation_input_tokens ?? base.cacheWriteTokens,
          reasoningTokens: u.output_tokens_details?.thinking_tokens ?? base.reasoningTokens,
        },
      };
    }
    case "content_block_start": {
      const b = event.content_block;
      if (b.type === "text") {
        blocks.set(event.index, { kind: "text", text: b.text });
        return b.text === "" ? {} : { text: b.text };
      }
      if (b.type === "tool_use") {
        blocks.set(event.index, { kind: "tool_use", id: b.id, name: b.name, json: "" });
      } else if (b.type === "thinking") {
        blocks.set(event.index, { kind: "thinking", text: b.thinking });
      } else blocks.set(event.index, { kind: "other" });
      return {};
    }
    case "content_block_delta": {
      const b = blocks.get(event.index);
      const d = event.delta;
      if (d.type === "text_delta" && b?.kind === "text") {
        b.text += d.text;
        return { text: d.text };
      }
      if (d.type === "input_json_delta" && b?.kind === "tool_use") b.json += d.partial_json;
      else if (d.type === "thinking_delta" && b?.kind === "thinking") {
        b.text += d.thinking;
        return d.thinking === "" ? {} : { reasoning: d.thinking };
      }
      return {};
    }
    case "content_block_stop": {
      const b = blocks.get(event.index);
      if (b?.kind === "tool_use") {
        return {
          part: { type: "tool_call", callId: b.id, toolName: b.name, argumentsJson: b.json },
        };
      }
      return {};
    }
    default:
      return {};
  }
}

function toWireTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", ...tool.inputSchema },
  };
}

/**
 * System text goes to the top-level field; tool results travel as user messages, merged with any
 * user input that follows them so roles alternate. Thinking is not sent back: it needs the
 * vendor's signature, which the conversation does not keep.
 */
export function toWireMessages(messages: readonly Message[]): {
  system: string;
  messages: MessageParam[];
} {
  const system: string[] = [];
  const out: MessageParam[] = [];
  const push = (role: "user" | "assistant", blocks: ContentBlockParam[]): void => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last !== undefined && last.role === role && Array.isArray(last.content)) {
      last.content.push(...blocks);
      return;
    }
    out.push({ role, content: blocks });
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
        system.push(m.text);
        break;
      case "user":
        push(
          "user",
          m.content.map((item): ContentBlockParam => {
            if (item.type === "text") return { type: "text", text: item.text };
            return item.image.kind === "url"
              ? { type: "image", source: { type: "url", url: item.image.url } }
              : {
                  type: "image",
                  source: {
                    type: "base64",
                    media_type: item.image.mediaType,
                    data: toBase64(item.image.data),
                  },
                };
          }),
        );
        break;
      case "assistant":
        push(
          "assistant",
          m.parts.flatMap((p): ContentBlockParam[] => {
            if (p.type === "text") return p.text === "" ? [] : [{ type: "text", text: p.text }];
            if (p.type === "tool_call") {
              return [{ type: "tool_use", id: p.callId, name: p.toolName, input: parseInput(p) }];
            }
            return [];
          }),
        );
        break;
      case "compaction":
        push("assistant", compactionBlock(m));
        break;
      case "tool":
        push("user", [
          {
            type: "tool_result",
            tool_use_id: m.callId,
            content: m.content,
            ...(m.isError ? { is_error: true } : {}),
          },
        ]);
        break;
    }
  }
  return { system: system.join("\n\n"), messages: out };
}

function parseInput(p: Extract<OutputPart, { type: "tool_call" }>): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(p.argumentsJson === "" ? "{}" : p.argumentsJson);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
