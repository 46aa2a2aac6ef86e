// What an agent version means for a turn: its stored definition (the API's canonical JSON of
// tether.v1.AgentDefinition) read into turn settings and client tools, and pins resolved against
// the store. A turn overlays its own options on the pinned definition, field by field, and its
// own client tools on the agent's, by name.
import type { JsonValue } from "../../domain/conversation.js";
import { bindingOf, type AgentBinding } from "../../domain/agent-binding.js";
import { agentNotFound } from "../../domain/errors.js";
import type { AgentStore } from "../../ports/runtime-store.js";
import type { ToolDefinition } from "../../ports/tool-executor.js";
import type { TurnSettings } from "./input-payload.js";

interface StoredDefinition {
  model?: string;
  systemPrompt?: string;
  temperature?: number;
  maxOutputTokens?: number;
  maxIterations?: number;
  /** uint64 travels as a string in protobuf JSON. */
  tokenBudget?: string;
  clientTools?: {
    name: string;
    description?: string;
    parametersJsonSchema?: string;
    requiresApproval?: boolean;
  }[];
  serverTools?: string[];
  approvalRequiredTools?: string[];
  /** The schema as JSON text, as the API checked it. */
  responseFormat?: { name?: string; jsonSchema?: string };
}

export interface AgentTurnDefaults {
  settings: TurnSettings;
  clientTools: ToolDefinition[];
}

export function readDefinition(json: string): AgentTurnDefaults {
  const d = JSON.parse(json) as StoredDefinition;
  const settings: TurnSettings = {
    ...(d.model && { model: d.model }),
    ...(d.systemPrompt && { systemPrompt: d.systemPrompt }),
    ...(d.temperature !== undefined && { temperature: d.temperature }),
    ...(d.maxOutputTokens && { maxOutputTokens: d.maxOutputTokens }),
    ...(d.maxIterations && { maxIterations: d.maxIterations }),
    ...(d.tokenBudget && Number(d.tokenBudget) > 0 && { tokenBudget: Number(d.tokenBudget) }),
    ...(d.serverTools?.length && { serverTools: d.serverTools }),
    ...(d.approvalRequiredTools?.length && { approvalRequiredTools: d.approvalRequiredTools }),
    ...(d.responseFormat?.jsonSchema && {
      responseFormat: {
        name: d.responseFormat.name || "response",
        schema: JSON.parse(d.responseFormat.jsonSchema) as { [key: string]: JsonValue },
      },
    }),
  };
  const clientTools = (d.clientTools ?? []).map((t): ToolDefinition => ({
    name: t.name,
    description: t.description ?? "",
    inputSchema: (t.parametersJsonSchema
      ? JSON.parse(t.parametersJsonSchema)
      : { type: "object" }) as { [key: string]: JsonValue },
    ...(t.requiresApproval === true && { requiresApproval: true }),
  }));
  return { settings, clientTools };
}

/** The agent's tools with the turn's own added; a turn's tool replaces the agent's of its name. */
export function overlayTools(
  agent: readonly ToolDefinition[],
  turn: readonly ToolDefinition[],
): ToolDefinition[] {
  const own = new Set(turn.map((t) => t.name));
  return [...agent.filter((t) => !own.has(t.name)), ...turn];
}

/** A pin to `version` (0 or undefined: the latest now) of `agentId`; agent_not_found otherwise. */
export async function resolvePin(
  store: Pick<AgentStore, "getAgent">,
  agentId: string,
  clientAgentId: string,
  version: number | undefined,
): Promise<AgentBinding> {
  const found = await store.getAgent(agentId, version === 0 ? undefined : version);
  if (!found) throw agentNotFound(clientAgentId, version === 0 ? undefined : version);
  return { agentId, version: found.version };
}

/** The definition of the agent version a session is pinned to, if it is bound to one. */
export async function pinnedDefaults(
  deps: { store: Pick<AgentStore, "getAgent">; logger: { warn(f: object, m: string): void } },
  metadata: Readonly<Record<string, string>> | undefined,
): Promise<AgentTurnDefaults | undefined> {
  const binding = bindingOf(metadata ?? {});
  if (!binding) return undefined;
  const found = await deps.store.getAgent(binding.agentId, binding.version);
  if (!found) {
    // Versions are never removed (a delete keeps them), so this is a store that lost data.
    deps.logger.warn({ ...binding }, "pinned agent version missing: the turn runs without it");
    return undefined;
  }
  return readDefinition(found.definition);
}
