// A session's committed transcript as the Agents API's items (ADR 0037, "Items and turns"), named
// by the same rule as the events out (item-ids.ts): a user message after the input it carried,
// the turn's n-th assistant message with text, a call after its call id. A client tool's call
// (marked `client` by its commit) is a `function_call` with its `function_call_output`; any other
// call (Tether's own tools, an MCP server's) is an `mcp_call` holding its output, as the stream
// shows them.
import type { Message, OutputPart } from "../domain/conversation.js";
import {
  assistantMessage,
  functionCall,
  functionCallOutput,
  mcpCall,
  userMessage,
  type ItemStatus,
} from "./event-objects.js";
import { itemIds } from "./item-ids.js";

export interface CommittedMessage {
  message: Message;
  turnId: string;
}

/** One listed item: its id (the page cursor) and the object the API shows. */
export interface ListedItem {
  id: string;
  turnId: string;
  item: Record<string, unknown>;
}

type ToolResult = Extract<Message, { role: "tool" }>;

/** Per turn, what numbers the next message item takes. */
interface TurnCount {
  assistant: number;
  user: number;
}

/**
 * Every item of the messages, in transcript order. A call is the client's when its commit marked
 * it so, or (turns committed before the mark) when `isClientTool` names its tool (the session's
 * agent's function tools); a call's result is looked up by its call id.
 */
export function transcriptItems(
  messages: readonly CommittedMessage[],
  isClientTool: (toolName: string) => boolean,
): ListedItem[] {
  const results = new Map<string, ToolResult>();
  const clientCalls = new Set<string>();
  for (const { message } of messages) {
    if (message.role === "tool") results.set(message.callId, message);
    if (message.role !== "assistant") continue;
    for (const p of message.parts) {
      if (p.type === "tool_call" && (p.client === true || isClientTool(p.toolName))) {
        clientCalls.add(p.callId);
      }
    }
  }
  const isClient = (callId: string) => clientCalls.has(callId);
  const counts = new Map<string, TurnCount>();
  const items: ListedItem[] = [];
  const push = (turnId: string, item: Record<string, unknown>) =>
    items.push({ id: String(item.id), turnId, item });
  for (const { message, turnId } of messages) {
    let count = counts.get(turnId);
    if (!count) {
      count = { assistant: 0, user: 0 };
      counts.set(turnId, count);
    }
    if (message.role === "user") {
      const first = message.inputIds?.[0];
      const id = first
        ? itemIds.userMessage(first)
        : itemIds.unsourcedUserMessage(turnId, count.user);
      count.user += 1;
      push(turnId, userMessage(id, turnId, message.content));
    } else if (message.role === "assistant") {
      for (const item of assistantItems(message.parts, turnId, count, results, isClient)) {
        push(turnId, item);
      }
    } else if (message.role === "tool" && isClient(message.callId)) {
      push(turnId, functionCallOutput(message.callId, turnId, message.content, message.isError));
    }
  }
  return items;
}

/** An assistant message's text as one message item, then its calls, in the stream's order. */
function assistantItems(
  parts: readonly OutputPart[],
  turnId: string,
  count: TurnCount,
  results: ReadonlyMap<string, ToolResult>,
  isClient: (callId: string) => boolean,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const text = parts.map((p) => (p.type === "text" ? p.text : "")).join("");
  const calls = parts.filter((p) => p.type === "tool_call");
  if (text !== "") {
    const id = itemIds.assistantMessage(turnId, count.assistant);
    count.assistant += 1;
    const phase = calls.length > 0 ? "commentary" : "final_answer";
    out.push(assistantMessage(id, turnId, text, "completed", phase));
  }
  for (const call of calls) {
    const result = results.get(call.callId);
    const status: ItemStatus = !result ? "incomplete" : result.isError ? "failed" : "completed";
    const shown = { callId: call.callId, name: call.toolName, argumentsJson: call.argumentsJson };
    out.push(
      isClient(call.callId)
        ? functionCall(shown, turnId, status)
        : mcpCall(
            { ...shown, serverLabel: "tether" },
            turnId,
            result && { output: result.content, isError: result.isError },
            status,
          ),
    );
  }
  return out;
}
