// A deterministic provider: each call plays the next entry of a script. It backs tests, the
// benchmark, and (as the echo model) the embedded default when no vendor is configured.
import type { Message, OutputPart } from "../domain/conversation.js";
import { textDelta } from "../domain/turn-events.js";
import type { UsageTotals } from "../domain/usage.js";
import {
  ProviderError,
  type ModelCall,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
} from "../ports/model-provider.js";

export interface ScriptedCall {
  /** Streamed in order before the call ends. */
  events?: ModelStreamEvent[];
  /** The final response; default empty (no text, no parts, no usage). */
  response?: Partial<ModelResponse>;
  /** Thrown after the events instead of returning a response (a mid-stream failure). */
  error?: ProviderError;
  /** After the events, wait until the call is aborted (a model that never answers). */
  hang?: boolean;
}

export interface ScriptedProviderOptions {
  /** Entries are used once each, in order; a function answers every call. */
  script: readonly ScriptedCall[] | ((request: ModelRequest, index: number) => ScriptedCall);
  name?: string;
  acceptsImages?: boolean;
  /** Keep a copy of every request's messages (tests read them). Default true. */
  recordRequests?: boolean;
}

export interface ScriptedProvider extends ModelProvider {
  /** Messages of each call, copied when the call was made. */
  readonly requests: (readonly Message[])[];
  readonly callCount: number;
}

export function createScriptedProvider(options: ScriptedProviderOptions): ScriptedProvider {
  const requests: (readonly Message[])[] = [];
  const record = options.recordRequests ?? true;
  let index = 0;
  const next = (request: ModelRequest): ScriptedCall => {
    const i = index++;
    if (typeof options.script === "function") return options.script(request, i);
    const entry = options.script[i];
    if (entry === undefined) {
      throw new ProviderError(`script exhausted: no entry for call ${i + 1}`, { status: 400 });
    }
    return entry;
  };
  return {
    name: options.name ?? "scripted",
    capabilities: { images: options.acceptsImages ?? true },
    requests,
    get callCount() {
      return index;
    },
    call(request: ModelRequest): ModelCall {
      if (record) requests.push([...request.messages]);
      return play(request, () => next(request));
    },
  };
}

async function* play(
  request: ModelRequest,
  entry: () => ScriptedCall,
): AsyncGenerator<ModelStreamEvent, ModelResponse, undefined> {
  const step = entry();
  const { signal } = request;
  if (step.events !== undefined) {
    for (const event of step.events) {
      throwIfAborted(signal);
      yield event;
    }
  }
  throwIfAborted(signal);
  if (step.hang === true) {
    await new Promise<never>((_, reject) => {
      signal.addEventListener("abort", () => reject(abortError(signal)), { once: true });
    });
  }
  if (step.error !== undefined) throw step.error;
  const r = step.response ?? {};
  const response: ModelResponse = { fullText: r.fullText ?? "", parts: r.parts ?? [] };
  if (r.usage !== undefined) response.usage = r.usage;
  if (r.model !== undefined) response.model = r.model;
  return response;
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

function abortError(signal: AbortSignal): ProviderError {
  return new ProviderError("model call aborted", { retryable: false, cause: signal.reason });
}

export interface EchoProviderOptions {
  /** Characters per streamed delta; default 16. */
  chunkSize?: number;
  /** Reported usage per call; default counts characters as tokens. */
  usage?: (input: string, output: string) => UsageTotals;
}

/** The embedded default model: answers with the last user message's text, streamed in deltas. */
export function createEchoProvider(options: EchoProviderOptions = {}): ScriptedProvider {
  const chunk = Math.max(1, options.chunkSize ?? 16);
  return createScriptedProvider({
    name: "echo",
    recordRequests: false,
    script: (request) => {
      const text = lastUserText(request.messages);
      const events: ModelStreamEvent[] = [];
      for (let i = 0; i < text.length; i += chunk) {
        events.push(textDelta(text.slice(i, i + chunk)));
      }
      const usage = options.usage?.(text, text) ?? {
        inputTokens: text.length,
        outputTokens: text.length,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      };
      const parts: OutputPart[] = text === "" ? [] : [{ type: "text", text }];
      return { events, response: { fullText: text, parts, usage } };
    },
  });
}

function lastUserText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    return m.content.map((item) => (item.type === "text" ? item.text : "[image]")).join("\n");
  }
  return "";
}
