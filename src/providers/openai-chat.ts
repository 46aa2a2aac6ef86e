// OpenAI-compatible Chat Completions through the official SDK: streaming text, tool calls
// assembled from argument fragments, and the final usage chunk. Works with any base URL.
import OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { Message, OutputPart } from "../domain/conversation.js";
import { reasoningDelta, textDelta } from "../domain/turn-events.js";
import type { UsageTotals } from "../domain/usage.js";
import type {
  ModelCall,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from "../ports/model-provider.js";
import type { ToolDefinition } from "../ports/tool-executor.js";
import { ProviderError } from "../ports/model-provider.js";
import { toBase64, toProviderError } from "./provider-errors.js";

export interface OpenAIChatProviderOptions {
  apiKey: string;
  /** e.g. https://api.openai.com/v1, or any compatible server. */
  baseURL?: string;
  /** Used when a call names no model. */
  defaultModel: string;
  /** Per request, connect to last byte. Default 10 minutes. */
  timeoutMs?: number;
  defaultHeaders?: Record<string, string>;
  /** Some compatible servers reject stream_options; default true. */
  includeStreamUsage?: boolean;
}

export function createOpenAIChatProvider(options: OpenAIChatProviderOptions): ModelProvider {
  // The engine owns retries (it knows whether output was already forwarded); the SDK makes one try.
  const client = new OpenAI({
    apiKey: options.apiKey,
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    maxRetries: 0,
    timeout: options.timeoutMs ?? 600_000,
    ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: options.defaultHeaders }),
  });
  return {
    name: "openai-chat",
    capabilities: { images: true },
    defaultModel: options.defaultModel,
    call: (request) => stream(client, options, request),
  };
}

interface ToolCallBuffer {
  id: string;
  name: string;
  args: string;
}

async function* stream(
  client: OpenAI,
  options: OpenAIChatProviderOptions,
  request: ModelRequest,
): ModelCall {
  const { signal } = request;
  let text = "";
  let reasoning = "";
  // Calls in arrival order; `byIndex` is the call each stream index is currently filling.
  const calls: ToolCallBuffer[] = [];
  const byIndex = new Map<number, ToolCallBuffer>();
  let usage: UsageTotals | undefined;
  let finishReason: string | undefined;
  let answeredBy: string | undefined;
  try {
    const chunks = await client.chat.completions.create(wireRequest(options, request), {
      signal,
    });
    for await (const chunk of chunks) {
      failOnErrorChunk(chunk);
      // Every chunk names the model; compatible servers may leave it empty.
      if (answeredBy === undefined && typeof chunk.model === "string" && chunk.model !== "") {
        answeredBy = chunk.model;
      }
      if (chunk.usage != null) {
        usage = toUsage(chunk.usage);
        yield { type: "usage", usage };
      }
      // Compatible servers send the final usage chunk with `choices` null or absent.
      const choice = (chunk.choices as ChatCompletionChunk.Choice[] | null | undefined)?.[0];
      if (choice == null) continue;
      if (choice.finish_reason != null) finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (delta == null) continue;
      const thought = reasoningOf(delta);
      if (thought !== "") {
        reasoning += thought;
        yield reasoningDelta(thought);
      }
      if (typeof delta.content === "string" && delta.content !== "") {
        text += delta.content;
        yield textDelta(delta.content);
      }
      for (const fragment of delta.tool_calls ?? []) addToolFragment(calls, byIndex, fragment);
    }
    // The SDK ends the iteration quietly on abort; the port promises a rejection.
    if (signal.aborted) throw new Error("aborted");
    // Every complete answer ends with a finish reason; a body that ends without one was cut.
    if (finishReason === undefined) {
      throw new ProviderError("openai: the stream ended early, before the model finished");
    }
  } catch (err) {
    throw toProviderError("openai", err, signal);
  }

  const parts: OutputPart[] = [];
  if (reasoning !== "") parts.push({ type: "reasoning", text: reasoning });
  if (text !== "") parts.push({ type: "text", text });
  for (const c of calls) {
    const part: OutputPart = {
      type: "tool_call",
      callId: c.id,
      toolName: c.name,
      argumentsJson: c.args,
    };
    yield { type: "part", part } satisfies ModelStreamEvent;
    parts.push(part);
  }
  const response: ModelResponse = { fullText: text, parts };
  if (usage !== undefined) response.usage = usage;
  if (finishReason === "length") response.truncated = true;
  if (answeredBy !== undefined) response.model = answeredBy;
  return response;
}

/** The streaming Chat Completions request for one model call. */
function wireRequest(
  options: OpenAIChatProviderOptions,
  request: ModelRequest,
): ChatCompletionCreateParamsStreaming {
  return {
    model: request.options.model ?? options.defaultModel,
    messages: toWireMessages(request.messages),
    ...(request.tools.length === 0 ? {} : { tools: request.tools.map(toWireTool) }),
    ...(request.options.temperature === undefined
      ? {}
      : { temperature: request.options.temperature }),
    ...(request.options.maxOutputTokens === undefined
      ? {}
      : { max_completion_tokens: request.options.maxOutputTokens }),
    ...(request.options.responseFormat && {
      response_format: {
        type: "json_schema" as const,
        json_schema: {
          name: request.options.responseFormat.name,
          schema: request.options.responseFormat.schema,
        },
      },
    }),
    stream: true,
    ...(options.includeStreamUsage === false ? {} : { stream_options: { include_usage: true } }),
  };
}

/** Adds one streamed fragment to the call its index is filling, or starts the next call. */
function addToolFragment(
  calls: ToolCallBuffer[],
  byIndex: Map<number, ToolCallBuffer>,
  fragment: ChatCompletionChunk.Choice.Delta.ToolCall,
): void {
  let buffer = byIndex.get(fragment.index);
  const id = fragment.id ?? "";
  // A new id at a used index is another call (some servers number every call 0).
  if (buffer === undefined || (id !== "" && buffer.id !== "" && id !== buffer.id)) {
    buffer = { id: "", name: "", args: "" };
    calls.push(buffer);
    byIndex.set(fragment.index, buffer);
  }
  if (id !== "") buffer.id = id;
  // Names arrive whole; a server that repeats the name on later chunks must not double it.
  const name = fragment.function?.name;
  if (name != null && name !== "" && buffer.name === "") buffer.name = name;
  if (fragment.function?.arguments != null) buffer.args += fragment.function.arguments;
}

/** vLLM and others report a failure mid-stream as a chunk `{"object":"error","message":...}`. */
function failOnErrorChunk(chunk: ChatCompletionChunk): void {
  const raw = chunk as unknown as { object?: unknown; message?: unknown; code?: unknown };
  if (raw.object !== "error") return;
  const message = typeof raw.message === "string" ? raw.message : "the server reported an error";
  const status = typeof raw.code === "number" && raw.code >= 400 ? raw.code : undefined;
  throw new ProviderError(`openai: ${message}`, status === undefined ? {} : { status });
}

/** Compatible servers stream chain-of-thought under one of these non-standard fields. */
function reasoningOf(delta: ChatCompletionChunk.Choice.Delta): string {
  const extra = delta as { reasoning_content?: unknown; reasoning?: unknown };
  if (typeof extra.reasoning_content === "string") return extra.reasoning_content;
  if (typeof extra.reasoning === "string") return extra.reasoning;
  return "";
}

function toUsage(u: NonNullable<ChatCompletionChunk["usage"]>): UsageTotals {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    // Chat Completions counts cached tokens inside prompt_tokens; the port counts them apart.
    inputTokens: Math.max(0, u.prompt_tokens - cached),
    outputTokens: u.completion_tokens,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

function toWireTool(tool: ToolDefinition): ChatCompletionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}

export function toWireMessages(messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "system":
        out.push({ role: "system", content: m.text });
        break;
      case "user": {
        if (m.content.length === 1 && m.content[0]?.type === "text") {
          out.push({ role: "user", content: m.content[0].text });
          break;
        }
        const content: ChatCompletionContentPart[] = m.content.map((item) => {
          if (item.type === "text") return { type: "text", text: item.text };
          const url =
            item.image.kind === "url"
              ? item.image.url
              : `data:${item.image.mediaType};base64,${toBase64(item.image.data)}`;
          return { type: "image_url", image_url: { url } };
        });
        out.push({ role: "user", content });
        break;
      }
      case "assistant": {
        const text = m.parts
          .filter((p) => p.type === "text")
          .map((p) => p.text)
          .join("\n\n");
        const toolCalls = m.parts.flatMap((p) =>
          p.type === "tool_call"
            ? [
                {
                  id: p.callId,
                  type: "function" as const,
                  function: { name: p.toolName, arguments: p.argumentsJson },
                },
              ]
            : [],
        );
        if (text === "" && toolCalls.length === 0) break;
        out.push({
          role: "assistant",
          content: text === "" ? null : text,
          ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
        });
        break;
      }
      case "tool":
        out.push({ role: "tool", tool_call_id: m.callId, content: m.content });
        break;
    }
  }
  return out;
}
