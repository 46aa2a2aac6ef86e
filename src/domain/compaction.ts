// Context management: when a session's transcript nears the model's window, older messages are
// summarized (and old tool outputs cleared) at the safe boundary before a model call. The policy
// is set on the agent and overridden by a turn field by field; the result is a typed transcript
// item committed with the turn, so the full history stays and providers see summary plus tail.
import type { CompactionItem, CompactionMode, Message } from "./conversation.js";
import { TetherError, type FieldViolation } from "./errors.js";

export type { CompactionItem, CompactionMode };

export interface ClearToolResults {
  /** The most recent tool results kept whole; older ones become a short placeholder. */
  keepLast: number;
  /** Tools whose results are never cleared. */
  excludeTools: string[];
}

/** The policy as written: every field optional, so a turn overrides an agent field by field. */
export interface ContextManagement {
  /** Estimated input tokens before a model call at which compaction runs; unset: never. */
  triggerTokens?: number;
  /** Tokens of the newest messages kept verbatim. */
  keepRecentTokens?: number;
  /** Replaces the default summary instructions. */
  instructions?: string;
  clearToolResults?: ClearToolResults;
  mode?: CompactionMode;
}

/** The policy a turn runs with: a trigger is set, the rest has its defaults filled in. */
export interface ContextPolicy {
  triggerTokens: number;
  keepRecentTokens: number;
  instructions: string;
  clearToolResults: ClearToolResults | undefined;
  mode: CompactionMode;
}

export const MIN_TRIGGER_TOKENS = 1_000;

export const DEFAULT_SUMMARY_INSTRUCTIONS =
  "Summarize the conversation above for your own later use. Keep every fact, decision, " +
  "open question, name, number and file the user or the tools gave, and what remains to do. " +
  "Write plain prose; do not address the user.";

/** The placeholder a cleared tool result shows the model. */
export const CLEARED_TOOL_RESULT = "[tool result cleared to save context]";

/** Field violations of a policy; `prefix` names where it came from (e.g. `options.context_management`). */
export function validateContextManagement(
  policy: ContextManagement,
  prefix: string,
): FieldViolation[] {
  const out: FieldViolation[] = [];
  const t = policy.triggerTokens;
  if (t !== undefined && t !== 0 && (!Number.isInteger(t) || t < MIN_TRIGGER_TOKENS)) {
    out.push({
      field: `${prefix}.trigger_tokens`,
      description: `must be at least ${MIN_TRIGGER_TOKENS} (or 0 for off)`,
    });
  }
  const k = policy.keepRecentTokens;
  if (k !== undefined && (!Number.isInteger(k) || k < 0)) {
    out.push({ field: `${prefix}.keep_recent_tokens`, description: "must not be negative" });
  }
  if (t !== undefined && t !== 0 && k !== undefined && k >= t) {
    out.push({
      field: `${prefix}.keep_recent_tokens`,
      description: "must be less than trigger_tokens",
    });
  }
  const keepLast = policy.clearToolResults?.keepLast;
  if (keepLast !== undefined && (!Number.isInteger(keepLast) || keepLast < 0)) {
    out.push({
      field: `${prefix}.clear_tool_results.keep_last`,
      description: "must not be negative",
    });
  }
  return out;
}

export function invalidContextManagement(violations: FieldViolation[]): TetherError {
  return new TetherError(
    "invalid_argument",
    `invalid context management: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`,
    { violations },
  );
}

/** The turn's fields over the agent's, field by field (clear_tool_results as one field). */
export function overlayContextManagement(
  agent: ContextManagement | undefined,
  turn: ContextManagement | undefined,
): ContextManagement | undefined {
  if (agent === undefined) return turn;
  if (turn === undefined) return agent;
  const merged: ContextManagement = { ...agent };
  for (const [key, value] of Object.entries(turn)) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return merged;
}

/** The policy a turn runs with, or undefined when compaction is off (no trigger). */
export function resolveContextPolicy(cm: ContextManagement | undefined): ContextPolicy | undefined {
  const trigger = cm?.triggerTokens;
  if (cm === undefined || trigger === undefined || trigger === 0) return undefined;
  return {
    triggerTokens: trigger,
    // A quarter of the trigger keeps enough recent context to go on with, and leaves room.
    keepRecentTokens: Math.min(cm.keepRecentTokens ?? Math.floor(trigger / 4), trigger - 1),
    instructions:
      cm.instructions !== undefined && cm.instructions !== ""
        ? cm.instructions
        : DEFAULT_SUMMARY_INSTRUCTIONS,
    clearToolResults: cm.clearToolResults,
    mode: cm.mode ?? "summarize",
  };
}

/**
 * The documented estimate for text no provider has counted yet: four characters a token, the
 * usual figure for English with the common tokenizers; per message a few tokens of framing.
 */
export const CHARS_PER_TOKEN = 4;
const MESSAGE_OVERHEAD_TOKENS = 4;
const IMAGE_TOKENS = 1_000;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(message: Message): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  switch (message.role) {
    case "system":
      return tokens + estimateTextTokens(message.text);
    case "user":
      for (const item of message.content) {
        tokens += item.type === "text" ? estimateTextTokens(item.text) : IMAGE_TOKENS;
      }
      return tokens;
    case "assistant":
      for (const p of message.parts) {
        tokens += estimateTextTokens(
          p.type === "tool_call" ? p.argumentsJson + p.toolName : p.text,
        );
      }
      return tokens;
    case "tool":
      return tokens + estimateTextTokens(message.content);
    case "compaction":
      return tokens + estimateTextTokens(message.summary);
  }
}

export function estimateTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) total += estimateMessageTokens(m);
  return total;
}

/**
 * How providers are shown a compaction's summary: a user message ahead of the kept tail, so the
 * conversation still opens with the user whether the tail starts with the user or the assistant
 * (Anthropic requires that; adapters merge two user messages in a row).
 */
export function summaryMessage(summary: string): Message {
  return {
    role: "user",
    content: [{ type: "text", text: `Summary of the earlier conversation:\n${summary}` }],
  };
}
