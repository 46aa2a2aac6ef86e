// The model port: one call streams events, then returns the final response. Adapters in
// src/providers translate the conversation to a vendor's wire format and back.
import type { JsonValue, Message, OutputPart } from "../domain/conversation.js";
import type { ReasoningDelta, TextDelta } from "../domain/turn-events.js";
import type { UsageTotals } from "../domain/usage.js";
import type { ToolDefinition } from "./tool-executor.js";

export interface ModelCallOptions {
  model?: string;
  temperature?: number;
  maxOutputTokens?: number;
  /** The answer's JSON schema, for providers that shape output by one (structured output). */
  responseFormat?: { name: string; schema: { [key: string]: JsonValue } };
}

export interface ModelRequest {
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
  options: ModelCallOptions;
  /** Aborts the call: the adapter closes the connection and the iterator rejects. */
  signal: AbortSignal;
}

/**
 * Usage counts: `inputTokens` excludes cache reads and writes; `outputTokens` includes reasoning,
 * which `reasoningTokens` breaks out. A streamed usage event is a cumulative snapshot of the call.
 */
export type ModelStreamEvent =
  | TextDelta
  | ReasoningDelta
  | { type: "part"; part: OutputPart }
  | { type: "usage"; usage: UsageTotals };

export interface ModelResponse {
  /** All assistant text; may be empty when the adapter only streamed. */
  fullText: string;
  parts: OutputPart[];
  /** Absent, or all zero, when the provider reported none at the end. */
  usage?: UsageTotals;
  /** The model stopped at its output token limit: the text or the last tool call is cut. */
  truncated?: boolean;
  /**
   * The model that answered, as the provider named it in its reply (often a dated snapshot of
   * the alias requested); absent when the provider does not say.
   */
  model?: string;
}

/** Stream events, then the final response as the iterator's return value. */
export type ModelCall = AsyncIterator<ModelStreamEvent, ModelResponse, undefined>;

export interface ModelCapabilities {
  /** Whether image input items reach the model; otherwise the engine replaces them with a note. */
  images: boolean;
}

export interface ModelProvider {
  readonly name: string;
  readonly capabilities: ModelCapabilities;
  call(request: ModelRequest): ModelCall;
  /** The model a call without `options.model` runs on, where the adapter knows it. */
  readonly defaultModel?: string;
  /** The provider's own compaction, where it has one (context_management mode native or auto). */
  readonly nativeCompaction?: NativeCompaction;
}

/** One request of the provider's own compaction: it summarizes `messages` as it sees fit. */
export interface NativeCompactionRequest {
  /** What to summarize, as providers are sent it (a matching earlier native item may lead). */
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
  options: ModelCallOptions;
  /** Replaces the provider's own summary prompt; undefined keeps it. */
  instructions: string | undefined;
  signal: AbortSignal;
}

export interface NativeCompactionResult {
  /** The summary's readable text: shown to any other provider or model in place of the state. */
  summary: string;
  /** The provider's compaction state, sent back to it verbatim while provider and model match. */
  native: string;
  /** The model that made it. */
  model: string;
  usage: UsageTotals;
}

export interface NativeCompaction {
  /** The model a call with these options runs on: a native item is sent back only to it. */
  modelOf(options: ModelCallOptions): string;
  compact(request: NativeCompactionRequest): Promise<NativeCompactionResult>;
}

export interface ProviderErrorOptions {
  /** HTTP status, when the provider answered one. */
  status?: number;
  /** From a `retry-after` (or `retry-after-ms`) header. */
  retryAfterMs?: number;
  /** Defaults by status: 408, 409, 429, 5xx and transport failures (no status) are retryable. */
  retryable?: boolean;
  cause?: unknown;
}

/** A classified provider failure: adapters throw this, the engine decides to retry or fail. */
export class ProviderError extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly retryable: boolean;

  constructor(message: string, options: ProviderErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProviderError";
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.retryable = options.retryable ?? isRetryableStatus(options.status);
  }
}

export function isRetryableStatus(status: number | undefined): boolean {
  if (status === undefined) return true;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Parses `retry-after` (seconds or an HTTP date) and `retry-after-ms` into milliseconds. */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  nowMs: number,
): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) {
    return Math.max(0, Number(ms));
  }
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
