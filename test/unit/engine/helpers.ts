// Test doubles for the engine: a recording sink, small tool executors and an engine factory.
import type { JsonValue, Message } from "../../../src/domain/conversation.js";
import type { TurnEvent } from "../../../src/domain/turn-events.js";
import { createTurnEngine, type TurnEngineOptions } from "../../../src/engine/index.js";
import type { TurnEventSink } from "../../../src/ports/event-sink.js";
import { systemSleep } from "../../../src/ports/sleep.js";
import type {
  ToolCallRequest,
  ToolContext,
  ToolDefinition,
  ToolExecutor,
  ToolResult,
} from "../../../src/ports/tool-executor.js";
import {
  createScriptedProvider,
  type ScriptedCall,
  type ScriptedProvider,
} from "../../../src/providers/scripted.js";

export interface RecordingSink extends TurnEventSink {
  readonly events: TurnEvent[];
  streamedText(): string;
  types(): string[];
}

export function recordingSink(): RecordingSink {
  const events: TurnEvent[] = [];
  return {
    events,
    emit: (event) => {
      events.push(event);
    },
    streamedText: () =>
      events
        .filter((e): e is Extract<TurnEvent, { type: "text_delta" }> => e.type === "text_delta")
        .map((e) => e.text)
        .join(""),
    types: () => events.map((e) => e.type),
  };
}

export type ToolFn = (call: ToolCallRequest, context: ToolContext) => Promise<ToolResult>;

/** An executor over named functions; each tool accepts any arguments. */
export function toolsOf(fns: Record<string, ToolFn>): ToolExecutor {
  const definitions: ToolDefinition[] = Object.keys(fns).map((name) => ({
    name,
    description: `test tool ${name}`,
    inputSchema: { type: "object" },
  }));
  return {
    definitions: () => definitions,
    execute: (call, context) => {
      const fn = fns[call.toolName];
      if (fn === undefined) throw new Error(`no such tool ${call.toolName}`);
      return fn(call, context);
    },
  };
}

/** Echoes the `value` argument as `{ payload: "raw:<value>" }`. */
export const echoTool: ToolFn = (call) => {
  const args = call.arguments as { value?: JsonValue };
  return Promise.resolve({ output: { payload: `raw:${String(args.value)}` } });
};

export function engineWith(
  script: ScriptedCall[],
  extra: Partial<TurnEngineOptions> = {},
): { engine: ReturnType<typeof createTurnEngine>; provider: ScriptedProvider } {
  const provider = createScriptedProvider({ script });
  const engine = createTurnEngine({ provider, sleep: systemSleep, ...extra });
  return { engine, provider };
}

export function text(t: string): { type: "text"; text: string } {
  return { type: "text", text: t };
}

export function toolCall(
  callId: string,
  toolName: string,
  argumentsJson = "{}",
): { type: "tool_call"; callId: string; toolName: string; argumentsJson: string } {
  return { type: "tool_call", callId, toolName, argumentsJson };
}

export function assistantMessages(messages: readonly Message[]): Message[] {
  return messages.filter((m) => m.role === "assistant");
}

/** Every tool call in `messages` has exactly one tool result after it. */
export function unansweredToolCalls(messages: readonly Message[]): string[] {
  const open = new Map<string, number>();
  for (const m of messages) {
    if (m.role === "assistant") {
      for (const p of m.parts) if (p.type === "tool_call") open.set(p.callId, 0);
    } else if (m.role === "tool") {
      open.set(m.callId, (open.get(m.callId) ?? 0) + 1);
    }
  }
  return [...open.entries()].filter(([, n]) => n !== 1).map(([id]) => id);
}
