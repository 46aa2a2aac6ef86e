// The echo model with a tool command, for interop tests and demos of client-executed tools: a
// user message "/tool <name> <json arguments>" asks for that tool; the call's result is then
// echoed back as the turn's answer. Any other text is echoed as by the plain echo model.
import type { Message, OutputPart } from "../domain/conversation.js";
import { textDelta } from "../domain/turn-events.js";
import type { ModelRequest, ModelStreamEvent } from "../ports/model-provider.js";
import { createScriptedProvider, type ScriptedCall, type ScriptedProvider } from "./scripted.js";

export interface ToolDemoProviderOptions {
  /** Characters per streamed delta; default 16. */
  chunkSize?: number;
}

const COMMAND = /^\/tool\s+(\S+)(?:\s+([\s\S]*))?$/u;

export function createToolDemoProvider(options: ToolDemoProviderOptions = {}): ScriptedProvider {
  const chunk = Math.max(1, options.chunkSize ?? 16);
  return createScriptedProvider({
    name: "scripted-tools",
    recordRequests: false,
    script: (request) => answer(request, chunk),
  });
}

function answer(request: ModelRequest, chunk: number): ScriptedCall {
  const last = request.messages.at(-1);
  if (last?.role === "tool") {
    return say(`${last.toolName} returned ${last.content}`, chunk);
  }
  const text = last?.role === "user" ? userText(last) : "";
  const command = COMMAND.exec(text.trim());
  if (command === null) return say(text, chunk);
  const toolName = command[1] ?? "";
  const argumentsJson = command[2]?.trim() || "{}";
  if (!request.tools.some((tool) => tool.name === toolName)) {
    return say(`no tool named ${toolName} is offered`, chunk);
  }
  try {
    JSON.parse(argumentsJson);
  } catch {
    return say(`the arguments of ${toolName} are not JSON`, chunk);
  }
  // Numbered by the calls already in the conversation, so a session's call ids never repeat.
  const callId = `call-${countToolCalls(request.messages) + 1}`;
  const part: OutputPart = { type: "tool_call", callId, toolName, argumentsJson };
  return { response: { parts: [part], usage: usage(0, 0) } };
}

function say(text: string, chunk: number): ScriptedCall {
  const events: ModelStreamEvent[] = [];
  for (let i = 0; i < text.length; i += chunk) {
    events.push(textDelta(text.slice(i, i + chunk)));
  }
  const parts: OutputPart[] = text === "" ? [] : [{ type: "text", text }];
  return { events, response: { fullText: text, parts, usage: usage(text.length, text.length) } };
}

function usage(inputTokens: number, outputTokens: number) {
  return { inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

function userText(message: Extract<Message, { role: "user" }>): string {
  return message.content.map((item) => (item.type === "text" ? item.text : "[image]")).join("\n");
}

function countToolCalls(messages: readonly Message[]): number {
  let count = 0;
  for (const m of messages) {
    if (m.role === "assistant") count += m.parts.filter((p) => p.type === "tool_call").length;
  }
  return count;
}
