// How a turn runs, as a request or an agent sets it: model, prompt, limits, tools, answer format,
// compaction. One shape for both (an agent's definition is these plus its client tools, in
// agents.ts), so a new setting is written once; a turn overlays its own on the agent's.
import type { Budget } from "./budgets.js";
import type { ContextManagement } from "./compaction.js";
import type { JsonValue } from "./conversation.js";

/** The JSON schema a final answer must match, and the name providers show the model. */
export interface ResponseFormat {
  /** Letters, digits, `_` and `-`, at most 64. */
  name: string;
  schema: { [key: string]: JsonValue };
}

export interface TurnSettings {
  model?: string;
  temperature?: number;
  maxOutputTokens?: number;
  maxIterations?: number;
  /** Tokens the whole turn may use (see countedTokens): the wire's and the stored `tokenBudget`. */
  maxTurnTokens?: number;
  /** Limits on the session's cumulative spend (ADR 0016); a turn's may only lower the agent's. */
  budget?: Budget;
  systemPrompt?: string;
  /** Tools (client or server, by name) whose calls wait for approval. */
  approvalRequiredTools?: string[];
  /** Tool servers (or `<server>__<tool>` names) whose tools the turn offers; none when unset. */
  serverTools?: string[];
  /** The JSON schema the final answer must match (checked by runtime/turn/response-format.ts). */
  responseFormat?: ResponseFormat;
  /** Compaction policy as the request set it; overlaid on the agent's field by field. */
  contextManagement?: ContextManagement;
}

/**
 * The stored form (a pending input's payload, a parked turn's progress): the turn's token cap
 * under its first key, `tokenBudget`, so what one version wrote the next reads, and a payload a
 * client wrote through QueueService keeps its meaning.
 */
export type StoredTurnSettings = Omit<TurnSettings, "maxTurnTokens"> & { tokenBudget?: number };

export function settingsToStored(settings: TurnSettings): StoredTurnSettings {
  const { maxTurnTokens, ...rest } = settings;
  return maxTurnTokens === undefined ? rest : { ...rest, tokenBudget: maxTurnTokens };
}

export function settingsFromStored(stored: StoredTurnSettings | undefined): TurnSettings {
  if (stored === undefined) return {};
  const { tokenBudget, ...rest } = stored;
  return tokenBudget === undefined ? rest : { ...rest, maxTurnTokens: tokenBudget };
}
