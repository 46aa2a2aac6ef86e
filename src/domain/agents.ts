// Agents as data: a named, versioned definition of how a session's turns run (model, system
// prompt, options, tools). Every update makes a new immutable version; old versions stay readable,
// also after the agent is deleted, so a session pinned to a version keeps working. The API decodes
// a definition once into `AgentDefinition`; the store keeps it as this module's JSON encoding.
import type { Budget } from "./budgets.js";
import type { ContextManagement } from "./compaction.js";
import type { JsonValue } from "./conversation.js";
import type { TurnSettings } from "./turn-settings.js";

type JsonObject = { [key: string]: JsonValue };

/** A tool the client runs, offered to every turn of the agent's sessions. */
export interface AgentTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments object (`{"type":"object"}` when the agent named none). */
  inputSchema: JsonObject;
  requiresApproval?: boolean;
}

/** A checked definition: the settings a turn's own options may override, and the client tools. */
export interface AgentDefinition extends TurnSettings {
  clientTools: AgentTool[];
  /** The caller's labels (the HTTP front door's `metadata`, ADR 0037); Tether never reads them. */
  metadata?: Record<string, string>;
  /** When the agent's first version was made, carried into every later version (ADR 0037). */
  createdAtMs?: number;
  /**
   * Settings a client gave that Tether keeps and returns but does not act on (the front door's
   * `reasoning`, `service_tier`, `text.verbosity`, MCP tool entries as written), ADR 0037.
   */
  echo?: JsonObject;
}

export interface AgentVersion {
  agentId: string;
  /** 1 for the first version; each update adds one. */
  version: number;
  displayName: string;
  /** `encodeAgentDefinition`'s JSON; opaque to the store. */
  definition: string;
  createdAtMs: number;
}

export interface AgentDraft {
  agentId: string;
  displayName: string;
  definition: string;
}

export interface AgentUpdate extends AgentDraft {
  /** The version the caller read: the update applies only while it is still the latest. */
  expectedVersion: number;
}

export interface AgentListPage {
  /** The latest version of each agent, in id order. */
  agents: AgentVersion[];
  /** Pass as `cursor` for the next page; undefined on the last page. */
  nextCursor: string | undefined;
}

/**
 * The stored form: the fields in the order of tether.v1.AgentDefinition, unset ones left out, so a
 * definition of plain fields is written exactly as the protobuf JSON stored before this encoding.
 */
export function encodeAgentDefinition(d: AgentDefinition): string {
  const tools = d.clientTools.map((t) => ({
    name: t.name,
    ...(t.description !== "" && { description: t.description }),
    inputSchema: t.inputSchema,
    ...(t.requiresApproval === true && { requiresApproval: true }),
  }));
  return JSON.stringify({
    model: d.model,
    systemPrompt: d.systemPrompt,
    temperature: d.temperature,
    maxOutputTokens: d.maxOutputTokens,
    maxIterations: d.maxIterations,
    tokenBudget: d.maxTurnTokens,
    ...(tools.length > 0 && { clientTools: tools }),
    ...(d.serverTools?.length && { serverTools: d.serverTools }),
    ...(d.approvalRequiredTools?.length && { approvalRequiredTools: d.approvalRequiredTools }),
    responseFormat: d.responseFormat,
    budget: d.budget,
    contextManagement: d.contextManagement,
    ...(d.metadata && { metadata: d.metadata }),
    ...(d.createdAtMs !== undefined && { createdAtMs: d.createdAtMs }),
    ...(d.echo && { echo: d.echo }),
  });
}

/** A stored field as either encoding writes it: this module's, or the earlier protobuf JSON. */
interface StoredDefinition {
  model?: string;
  systemPrompt?: string;
  temperature?: number;
  maxOutputTokens?: number;
  maxIterations?: number;
  /** A number here; protobuf JSON writes a uint64 as a decimal string. */
  tokenBudget?: number | string;
  clientTools?: {
    name: string;
    description?: string;
    inputSchema?: JsonObject;
    /** Protobuf JSON: the schema as JSON text, "" for any object. */
    parametersJsonSchema?: string;
    requiresApproval?: boolean;
  }[];
  serverTools?: string[];
  approvalRequiredTools?: string[];
  /** Protobuf JSON carries `jsonSchema` (text) and may leave `name` empty. */
  responseFormat?: { name?: string; schema?: JsonObject; jsonSchema?: string };
  budget?: Budget;
  contextManagement?: ContextManagement;
  metadata?: Record<string, string>;
  createdAtMs?: number;
  echo?: JsonObject;
}

const ANY_OBJECT: JsonObject = { type: "object" };

/** Reads a stored definition, in this module's encoding or the protobuf JSON stored before it. */
export function decodeAgentDefinition(json: string): AgentDefinition {
  const d = JSON.parse(json) as StoredDefinition;
  const budget = Number(d.tokenBudget ?? 0);
  const format = d.responseFormat;
  const formatSchema =
    format?.schema ?? (format?.jsonSchema ? (JSON.parse(format.jsonSchema) as JsonObject) : null);
  return {
    ...(d.model && { model: d.model }),
    ...(d.systemPrompt && { systemPrompt: d.systemPrompt }),
    ...(d.temperature !== undefined && { temperature: d.temperature }),
    ...(d.maxOutputTokens && { maxOutputTokens: d.maxOutputTokens }),
    ...(d.maxIterations && { maxIterations: d.maxIterations }),
    ...(budget > 0 && { maxTurnTokens: budget }),
    clientTools: (d.clientTools ?? []).map((t): AgentTool => ({
      name: t.name,
      description: t.description ?? "",
      inputSchema:
        t.inputSchema ??
        (t.parametersJsonSchema ? (JSON.parse(t.parametersJsonSchema) as JsonObject) : ANY_OBJECT),
      ...(t.requiresApproval === true && { requiresApproval: true }),
    })),
    ...(d.serverTools?.length && { serverTools: d.serverTools }),
    ...(d.approvalRequiredTools?.length && { approvalRequiredTools: d.approvalRequiredTools }),
    ...(formatSchema && {
      responseFormat: { name: format?.name || "response", schema: formatSchema },
    }),
    ...(d.budget && { budget: d.budget }),
    ...(d.contextManagement && { contextManagement: d.contextManagement }),
    ...(d.metadata && { metadata: d.metadata }),
    ...(d.createdAtMs !== undefined && { createdAtMs: d.createdAtMs }),
    ...(d.echo && { echo: d.echo }),
  };
}
