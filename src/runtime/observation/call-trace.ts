// Spans of a turn's calls: each model call a `chat {model}` client span, each tool call an
// `execute_tool {name}` span, both children of the turn span (named as their parent: the port
// has no active span). A model call that fails retryably keeps its span open: the engine's next
// call is its retry (nothing else comes between), recorded as an event on the same span. Contents
// (messages, arguments, results) are recorded only when the tracer captures content.
import type { Message, OutputPart } from "../../domain/conversation.js";
import type { UsageTotals } from "../../domain/usage.js";
import {
  ProviderError,
  type ModelCall,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
} from "../../ports/model-provider.js";
import type { ToolDefinition, ToolExecutor, ToolResult } from "../../ports/tool-executor.js";
import type { TraceSpan, Tracer } from "../../ports/tracer.js";
import { providerExtras } from "../../ports/provider-extras.js";
import { GEN_AI, providerNameOf, TETHER } from "./trace-names.js";

/**
 * Spans a turn opened and has not ended, each with the failure it waits to retry (if any): the
 * turn's end closes them (an abandoned call; a retry the engine did not make is a failure).
 */
export type OpenSpans = Map<TraceSpan, unknown>;

/** The semconv message shape: a role and typed parts. */
function messageOf(message: Message): object {
  switch (message.role) {
    case "system":
      return { role: "system", parts: [{ type: "text", content: message.text }] };
    case "user":
      return {
        role: "user",
        parts: message.content.map((c) =>
          c.type === "text" ? { type: "text", content: c.text } : { type: "image" },
        ),
      };
    case "assistant":
      return { role: "assistant", parts: message.parts.map(partOf) };
    case "tool":
      return {
        role: "tool",
        parts: [{ type: "tool_call_response", id: message.callId, response: message.content }],
      };
    case "compaction":
      // Providers never receive one (the view sends its summary as a user message).
      return { role: "user", parts: [{ type: "text", content: message.summary }] };
  }
}

function partOf(part: OutputPart): object {
  if (part.type === "tool_call") {
    return {
      type: "tool_call",
      id: part.callId,
      name: part.toolName,
      arguments: part.argumentsJson,
    };
  }
  return { type: part.type, content: part.text };
}

function finishReasonOf(response: ModelResponse): string {
  if (response.truncated === true) return "length";
  return response.parts.some((p) => p.type === "tool_call") ? "tool_call" : "stop";
}

function endChat(
  tracer: Tracer,
  span: TraceSpan,
  response: ModelResponse,
  streamed: UsageTotals | undefined,
): void {
  const usage = response.usage ?? streamed;
  const reason = finishReasonOf(response);
  span.setAttributes({
    [GEN_AI.responseModel]: response.model,
    [GEN_AI.finishReasons]: [reason],
    [GEN_AI.inputTokens]: usage?.inputTokens,
    [GEN_AI.outputTokens]: usage?.outputTokens,
    ...(tracer.captureContent && {
      [GEN_AI.outputMessages]: JSON.stringify([
        { role: "assistant", parts: response.parts.map(partOf), finish_reason: reason },
      ]),
    }),
  });
  span.end();
}

/**
 * The provider, its calls traced as children of `turn`. `open` collects spans the turn must close
 * if it stops.
 */
export function traceProvider(
  tracer: Tracer,
  provider: ModelProvider,
  open: OpenSpans,
  turn: TraceSpan,
): ModelProvider {
  // A retryable failure's span, continued by the next call (its retry).
  let retrying: { span: TraceSpan; attempt: number } | undefined;
  const startChat = (request: ModelRequest): { span: TraceSpan; attempt: number } => {
    // The model the call sends: the turn's, or the provider's default (TETHER_MODEL) when the
    // turn names none. Semconv names the span `chat {model}` whenever it is known.
    const model = request.options.model ?? provider.defaultModel;
    const span = tracer.startSpan(model === undefined ? "chat" : `chat ${model}`, {
      kind: "client",
      parent: turn,
      attributes: {
        [GEN_AI.operationName]: "chat",
        [GEN_AI.providerName]: providerNameOf(provider.name),
        [GEN_AI.requestModel]: model,
        [GEN_AI.requestTemperature]: request.options.temperature,
        [GEN_AI.requestMaxTokens]: request.options.maxOutputTokens,
        ...(tracer.captureContent && {
          [GEN_AI.inputMessages]: JSON.stringify(request.messages.map(messageOf)),
        }),
      },
    });
    open.set(span, undefined);
    return { span, attempt: 1 };
  };
  return {
    name: provider.name,
    capabilities: provider.capabilities,
    ...providerExtras(provider),
    call(request: ModelRequest): ModelCall {
      const current = retrying ?? startChat(request);
      retrying = undefined;
      const { span } = current;
      if (current.attempt > 1) {
        span.addEvent("retry", { [TETHER.attempt]: current.attempt });
        open.set(span, undefined);
      }
      const inner = provider.call(request);
      let usage: UsageTotals | undefined;
      const failed = (error: unknown): void => {
        const status = error instanceof ProviderError ? error.status : undefined;
        span.addEvent("exception", {
          "exception.type": error instanceof Error ? error.name : "error",
          "exception.message": error instanceof Error ? error.message : String(error),
          "http.response.status_code": status,
        });
        if (error instanceof ProviderError && error.retryable) {
          retrying = { span, attempt: current.attempt + 1 };
          open.set(span, error);
          return;
        }
        span.fail(error, status === undefined ? undefined : String(status));
        open.delete(span);
        span.end();
      };
      return {
        async next() {
          try {
            const step = await inner.next();
            if (step.done === true) {
              open.delete(span);
              endChat(tracer, span, step.value, usage);
            } else if (step.value.type === "usage") {
              usage = step.value.usage;
            }
            return step;
          } catch (error) {
            failed(error);
            throw error;
          }
        },
      };
    },
  };
}

/** Where a tool runs, for tether.tool.origin. */
export interface ToolTraceContext {
  prep: { clientTools: readonly ToolDefinition[] };
  parking: { parking(): boolean };
}

/** The executor, its calls traced as children of `turnSpan`. */
export function traceTools(
  tracer: Tracer,
  executor: ToolExecutor,
  turn: ToolTraceContext,
  open: OpenSpans,
  turnSpan: TraceSpan,
): ToolExecutor {
  const clientNames = new Set(turn.prep.clientTools.map((d) => d.name));
  const settle = (span: TraceSpan, result: ToolResult): ToolResult => {
    if (result.isError === true) span.fail(new Error("the tool reported an error"), "tool_error");
    if (tracer.captureContent) {
      span.setAttributes({ [GEN_AI.toolCallResult]: JSON.stringify(result.output) });
    }
    return result;
  };
  return {
    definitions: () => executor.definitions(),
    async execute(call, context) {
      const span = tracer.startSpan(`execute_tool ${call.toolName}`, {
        kind: "internal",
        parent: turnSpan,
        attributes: {
          [GEN_AI.operationName]: "execute_tool",
          [GEN_AI.toolName]: call.toolName,
          [GEN_AI.toolCallId]: call.callId,
          [GEN_AI.toolType]: "function",
          [TETHER.toolOrigin]: clientNames.has(call.toolName) ? "client" : "server",
          ...(tracer.captureContent && { [GEN_AI.toolCallArguments]: call.argumentsJson }),
        },
      });
      open.set(span, undefined);
      try {
        return settle(span, await executor.execute(call, context));
      } catch (error) {
        // A call cut by the turn's park is answered later, in the resumed part: not a failure.
        if (turn.parking.parking()) span.setAttributes({ [TETHER.toolParked]: true });
        else span.fail(error);
        throw error;
      } finally {
        open.delete(span);
        span.end();
      }
    },
  };
}
