// What a turn runs with: the settings a request, an agent or the replica's defaults give it. The
// runtime's deps (the defaults), the turn room and the edge share them, so they live here.
import type { Budget } from "./budgets.js";
import type { ContextManagement } from "./compaction.js";
import type { JsonValue } from "./conversation.js";

/** The JSON schema a turn's final answer must match (checked in runtime/turn/response-format.ts). */
export interface ResponseFormat {
  /** A name providers show the model (letters, digits, `_` and `-`, at most 64). */
  name: string;
  schema: { [key: string]: JsonValue };
}

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
