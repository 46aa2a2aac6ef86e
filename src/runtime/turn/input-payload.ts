// What a pending turn input carries in its opaque store payload: the user's items and the
// per-turn settings of the request that submitted it.
import type { Budget } from "../../domain/budgets.js";
import type { ContextManagement } from "../../domain/compaction.js";
import type { InputItem } from "../../domain/conversation.js";
import type { ToolDefinition } from "../../ports/tool-executor.js";
import type { ResponseFormat } from "./response-format.js";
import { decodeJson, encodeJson } from "./message-codec.js";

export interface TurnSettings {
  model?: string;
  temperature?: number;
  maxOutputTokens?: number;
  maxIterations?: number;
  tokenBudget?: number;
  /** Limits on the session's cumulative spend (ADR 0016); a turn's may only lower the agent's. */
  budget?: Budget;
  systemPrompt?: string;
  /** Tools (client or server, by name) whose calls wait for approval. */
  approvalRequiredTools?: string[];
  /** Tool servers (or `<server>__<tool>` names) whose tools the turn offers; none when unset. */
  serverTools?: string[];
  /** The JSON schema the final answer must match (response-format.ts). */
  responseFormat?: ResponseFormat;
  /** Compaction policy as the request set it; overlaid on the agent's field by field. */
  contextManagement?: ContextManagement;
}

export interface InputPayload {
  items: InputItem[];
  clientTools: ToolDefinition[];
  settings: TurnSettings;
  /** The W3C traceparent of the request that submitted it: the parent of its turn's span. */
  trace?: string;
}

export function encodeInputPayload(payload: InputPayload): string {
  return encodeJson(payload);
}

/** Tolerates payloads written by other clients (e.g. plain text through QueueService). */
export function decodeInputPayload(raw: string): InputPayload {
  try {
    const parsed = decodeJson<Partial<InputPayload>>(raw);
    if (parsed && Array.isArray(parsed.items)) {
      return {
        items: parsed.items,
        clientTools: Array.isArray(parsed.clientTools) ? parsed.clientTools : [],
        settings: parsed.settings ?? {},
        ...(typeof parsed.trace === "string" && { trace: parsed.trace }),
      };
    }
  } catch {
    // not JSON: plain text below
  }
  return { items: [{ type: "text", text: raw }], clientTools: [], settings: {} };
}
