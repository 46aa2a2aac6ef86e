// The agent a door session is pinned to (ADR 0037). A session names an agent by `agent_id` (pinned
// to its latest version now, as CreateSession binds), or carries an inline `agent`, which becomes a
// hidden agent `inline_<session id>` (not an `agent_…` id, so agents.list never shows it) whose
// version the session is pinned to, as StreamTurn and CreateSession pin over gRPC. An update's
// agent fields write the hidden agent's next version (made from the pinned one) and move the pin:
// the session's binding, the only agent change UpdateSession offers.
import { bindingOf } from "../domain/agent-binding.js";
import { encodeAgentDefinition, type AgentVersion } from "../domain/agents.js";
import { invalidArgument, isTetherError } from "../domain/errors.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { createOnce, mergeUpdate } from "./agent-routes.js";
import type { TenantScope } from "../api/tenancy.js";
import { agentBindingPatch } from "../runtime/index.js";
import { bodyOf, definitionOf, type AgentBody } from "./agent-object.js";

export interface SessionAgentDeps {
  store: RuntimeStore;
  mcpServers: ReadonlySet<string>;
}

export const inlineAgentId = (sessionClientId: string) => `inline_${sessionClientId}`;

/** The binding patch of a create: by `agent_id`, or the inline agent (over `agent_id`'s). */
export async function createBinding(
  deps: SessionAgentDeps,
  scope: TenantScope,
  sessionClientId: string,
  agentId: string | undefined,
  inline: AgentBody | undefined,
): Promise<Record<string, string>> {
  const named = agentId && {
    agentId: scope.toStore(agentId, "agent_id"),
    clientAgentId: agentId,
    version: 0,
  };
  if (!inline) {
    if (!named) throw invalidArgument("agent_id", "is required without an inline agent");
    return agentBindingPatch(deps.store, named);
  }
  let base: AgentBody = {};
  if (named) {
    const found = await deps.store.getAgent(named.agentId);
    if (!found) return agentBindingPatch(deps.store, named); // agent_not_found, as CreateSession
    base = bodyOf(found);
  }
  if (!base.model && !inline.model)
    throw invalidArgument("agent.model", "is required without agent_id");
  const version = await writeInline(deps, scope, sessionClientId, merged(base, inline), true);
  return agentBindingPatch(deps.store, pinOf(scope, version));
}

/** The binding patch of an update's agent fields: the hidden agent's next version, pinned. */
export async function updateBinding(
  deps: SessionAgentDeps,
  scope: TenantScope,
  sessionClientId: string,
  metadata: Readonly<Record<string, string>>,
  patch: AgentBody,
): Promise<Record<string, string>> {
  const binding = bindingOf(metadata);
  const pinned = binding && (await deps.store.getAgent(binding.agentId, binding.version));
  const base = pinned ? bodyOf(pinned) : {};
  const version = await writeInline(deps, scope, sessionClientId, merged(base, patch));
  return agentBindingPatch(deps.store, pinOf(scope, version));
}

/**
 * The hidden agent's first version, or its next (compare-and-set on the latest). A create's
 * (`first`) is version 1 whoever made it: a create retried under its Idempotency-Key may find the
 * one its first attempt made.
 */
async function writeInline(
  deps: SessionAgentDeps,
  scope: TenantScope,
  sessionClientId: string,
  body: AgentBody,
  first = false,
): Promise<AgentVersion> {
  const parts = underAgent(() => definitionOf(body, deps.mcpServers));
  const agentId = scope.toStore(inlineAgentId(sessionClientId), "agent");
  const draft = {
    agentId,
    displayName: parts.displayName,
    definition: encodeAgentDefinition(parts.definition),
  };
  if (first) return createOnce(deps.store, draft);
  const latest = await deps.store.getAgent(agentId);
  if (!latest) return deps.store.createAgent(draft);
  return deps.store.updateAgent({ ...draft, expectedVersion: latest.version });
}

/** The agent's refusals name the field where the session body has it: under `agent`. */
function underAgent<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    const [violation] = isTetherError(error, "invalid_argument") ? error.violations : [];
    if (!violation) throw error;
    throw invalidArgument(`agent.${violation.field}`, violation.description);
  }
}

const pinOf = (scope: TenantScope, version: AgentVersion) => ({
  agentId: version.agentId,
  clientAgentId: scope.toClient(version.agentId),
  version: version.version,
});

/** The agent route's update rule (`mergeUpdate`), but the hidden agent's metadata stays its own. */
function merged(current: AgentBody, patch: AgentBody): AgentBody {
  return { ...mergeUpdate(current, patch), metadata: current.metadata ?? {} };
}
