// What an agent version means for a turn, and the one place a session is bound to one. The
// definition arrives decoded (domain/agents.ts); a turn overlays its own options on the pinned
// definition, field by field, and its own client tools on the agent's, by name.
import { bindingOf, bindingPatch } from "../../domain/agent-binding.js";
import { decodeAgentDefinition } from "../../domain/agents.js";
import { agentNotFound } from "../../domain/resource-errors.js";
import type { AgentStore } from "../../ports/runtime-store.js";
import type { ToolDefinition } from "../../ports/tool-executor.js";
import type { TurnSettings } from "./input-payload.js";

export interface AgentTurnDefaults {
  settings: TurnSettings;
  clientTools: ToolDefinition[];
}

/** A stored definition as a turn's defaults: its settings and its client tools. */
export function readDefinition(json: string): AgentTurnDefaults {
  // The front door's labels and echoed fields (ADR 0037) describe the agent, not how turns run.
  const {
    clientTools,
    metadata: _metadata,
    createdAtMs: _createdAtMs,
    echo: _echo,
    ...settings
  } = decodeAgentDefinition(json);
  return { settings, clientTools };
}

/** The agent tools with the turn's own added; a turn's tool replaces the agent's of its name. */
export function overlayTools(
  agent: readonly ToolDefinition[],
  turn: readonly ToolDefinition[],
): ToolDefinition[] {
  const own = new Set(turn.map((t) => t.name));
  return [...agent.filter((t) => !own.has(t.name)), ...turn];
}

/** An agent a request names: its store id, its id as the client wrote it, and the version. */
export interface AgentPin {
  agentId: string;
  clientAgentId: string;
  /** 0 or undefined: the latest version now. */
  version: number | undefined;
}

/**
 * The metadata patch that binds a session to `pin` (resolved against the store, so the session
 * keeps the version that was latest now) or, for undefined, unbinds it; agent_not_found when the
 * agent or version does not exist. CreateSession, UpdateSession and StreamTurn all bind here.
 */
export async function agentBindingPatch(
  store: Pick<AgentStore, "getAgent">,
  pin: AgentPin | undefined,
): Promise<Record<string, string>> {
  if (pin === undefined) return bindingPatch(undefined);
  const version = pin.version === 0 ? undefined : pin.version;
  const found = await store.getAgent(pin.agentId, version);
  if (!found) throw agentNotFound(pin.clientAgentId, version);
  return bindingPatch({ agentId: pin.agentId, version: found.version });
}

/** Whether a session's metadata binds it to the agent `agentId` (a store id), any version. */
export const isBoundTo = (metadata: Readonly<Record<string, string>>, agentId: string): boolean =>
  bindingOf(metadata)?.agentId === agentId;

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
