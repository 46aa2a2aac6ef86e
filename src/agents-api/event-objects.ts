// The objects the SSE stream's events carry (ADR 0037, "Events out"), built only from what the
// session's log tells, so the translator stays a pure function of the log. The session object of
// the session events is agent-session-shape.ts's, the one builder GET /sessions/{id} uses too.
import type { InputItem } from "../domain/conversation.js";
import type { UsageTotals } from "../domain/usage.js";
import { itemIds } from "./item-ids.js";

export type SessionStatus = "idle" | "in_progress" | "requires_action" | "failed";
export type TurnStatus =
  "queued" | "in_progress" | "waiting" | "completed" | "failed" | "cancelled";

export type RequiredAction =
  | { type: "function_call"; call_id: string; name: string; arguments: unknown; turn_id: string }
  | {
      type: "mcp_approval_request";
      request_id: string;
      turn_id: string;
      request: {
        type: "mcp_tool_call";
        name: string | null;
        arguments: unknown;
        server_label: string;
        message: string;
      };
    };

export function usageShape(usage: UsageTotals): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

export interface TurnView {
  id: string;
  sessionId: string;
  status: TurnStatus;
  usage?: UsageTotals;
  error?: { code: string; message: string };
  /** From the turn's durable record (turn-routes.ts); the log carries none of them. */
  agentId?: string;
  /** Unix seconds, as the API's timestamps. */
  createdAt?: number;
  startedAt?: number;
  completedAt?: number;
}

export function turnShape(turn: TurnView): Record<string, unknown> {
  return {
    id: turn.id,
    object: "agent.session.turn",
    session_id: turn.sessionId,
    agent_id: turn.agentId ?? null,
    // Present and null: the SDK helpers pick the first turn whose subagent_id is null.
    subagent_id: null,
    status: turn.status,
    created_at: turn.createdAt ?? 0,
    started_at: turn.startedAt ?? null,
    completed_at: turn.completedAt ?? null,
    usage: turn.usage ? usageShape(turn.usage) : null,
    error: turn.error ?? null,
  };
}

/** Arguments as an object when they parse (what the helpers prefer), else the string as sent. */
export function argumentsOf(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

export type ItemStatus = "in_progress" | "completed" | "incomplete" | "failed";

export function assistantMessage(
  id: string,
  turnId: string,
  text: string | undefined,
  status: ItemStatus,
  phase: "commentary" | "final_answer" | null,
): Record<string, unknown> {
  return {
    id,
    type: "message",
    turn_id: turnId,
    role: "assistant",
    content: text === undefined ? [] : [outputText(text)],
    phase,
    status,
  };
}

export function outputText(text: string): Record<string, unknown> {
  return { type: "output_text", text, annotations: [] };
}

/**
 * A user message the turn took in. The log names the input, not its text: the stream leaves the
 * content empty; the items lists give it from the transcript (`content`).
 */
export function userMessage(
  id: string,
  turnId: string,
  content: readonly InputItem[] = [],
): Record<string, unknown> {
  return {
    id,
    type: "message",
    turn_id: turnId,
    role: "user",
    content: content.map(inputContentOf),
    phase: null,
    status: "completed",
  };
}

/** An input item as the API's content part; inline image bytes as a `data:` URL. */
function inputContentOf(item: InputItem): Record<string, unknown> {
  if (item.type === "text") return { type: "input_text", text: item.text };
  const image = item.image;
  const url =
    image.kind === "url"
      ? image.url
      : `data:${image.mediaType};base64,${Buffer.from(image.data).toString("base64")}`;
  return { type: "input_image", image_url: url };
}

export function functionCall(
  call: { callId: string; name: string; argumentsJson: string },
  turnId: string,
  status: ItemStatus,
): Record<string, unknown> {
  return {
    id: itemIds.functionCall(call.callId),
    type: "function_call",
    turn_id: turnId,
    call_id: call.callId,
    name: call.name,
    arguments: argumentsOf(call.argumentsJson),
    status,
  };
}

export function functionCallOutput(
  callId: string,
  turnId: string,
  output: string,
  isError: boolean,
): Record<string, unknown> {
  return {
    id: itemIds.functionCallOutput(callId),
    type: "function_call_output",
    turn_id: turnId,
    call_id: callId,
    output: isError ? null : output,
    error: isError ? output : null,
    status: isError ? "failed" : "completed",
  };
}

export function mcpCall(
  call: { callId: string; name: string; argumentsJson: string; serverLabel: string },
  turnId: string,
  result: { output: string; isError: boolean } | undefined,
  status: ItemStatus,
): Record<string, unknown> {
  return {
    id: itemIds.mcpCall(call.callId),
    type: "mcp_call",
    turn_id: turnId,
    server_label: call.serverLabel,
    name: call.name,
    arguments: argumentsOf(call.argumentsJson),
    output: result && !result.isError ? result.output : null,
    error: result?.isError ? result.output : null,
    status,
  };
}
