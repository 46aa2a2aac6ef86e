// The Agents API's agent endpoints over the agent store (ADR 0037): create, retrieve, update
// (`null` clears a field; `metadata` and `tools` replace), list (newest first by default, cursor
// pages) and delete. The store keeps its rules (versions, compare-and-set); ids are scoped to the
// caller's tenant exactly as AgentService scopes them.
import {
  decodeAgentDefinition,
  encodeAgentDefinition,
  type AgentDefinition,
  type AgentVersion,
} from "../domain/agents.js";
import { isTetherError } from "../domain/errors.js";
import { agentNotFound, agentVersionConflict } from "../domain/resource-errors.js";
import type { AgentStore } from "../ports/runtime-store.js";
import { AGENT_ID_PREFIX, newAgentId } from "./agent-ids.js";
import { agentObject, bodyOf, definitionOf, type AgentBody } from "./agent-object.js";
import { AGENT_CREATE, AGENT_UPDATE } from "./agent-schemas.js";
import { bodyCheck } from "./body-check.js";
import { cursorPage, listPage, pageQueryOf } from "./cursor-page.js";
import { createIdOf, type KeyedCreates } from "./idempotent-create.js";
import type { Call, RouteTable } from "./route-table.js";

const checkCreate = bodyCheck<AgentBody>(AGENT_CREATE);
const checkUpdate = bodyCheck<AgentBody>(AGENT_UPDATE);

export interface AgentRoutesDeps {
  store: AgentStore;
  /** The MCP servers the operator declared: the only `server_label`s an `mcp` tool may name. */
  mcpServers: ReadonlySet<string>;
  /** Where a create's Idempotency-Key is kept. */
  keys: KeyedCreates;
}

export function addAgentRoutes(routes: RouteTable, deps: AgentRoutesDeps): void {
  const { store, mcpServers } = deps;
  const shown = (version: AgentVersion, call: Call) =>
    agentObject(version, call.scope.toClient(version.agentId));
  const latest = async (call: Call) => {
    const clientId = call.params.agent_id ?? "";
    const found = await store.getAgent(call.scope.toStore(clientId, "agent_id"));
    if (!found) throw agentNotFound(clientId);
    return found;
  };

  routes.add("POST", "/v1/agents", async (call) => {
    const parts = definitionOf(checkCreate(call.body), mcpServers);
    const { id, first } = await createIdOf(deps.keys, call, "agents.create", () => newAgentId());
    const agentId = call.scope.toStore(id, "agent_id");
    // A retry under its key answers with the version its first attempt made (the first answer),
    // and makes it when that attempt stopped short of it.
    const made = first ? undefined : await store.getAgent(agentId, 1);
    const created =
      made ??
      (await createOnce(store, {
        agentId,
        displayName: parts.displayName,
        definition: encodeAgentDefinition(parts.definition),
      }));
    return { status: 200, body: shown(created, call) };
  });

  routes.add("GET", "/v1/agents/:agent_id", async (call) => ({
    status: 200,
    body: shown(await latest(call), call),
  }));

  routes.add("POST", "/v1/agents/:agent_id", async (call) => {
    const patch = checkUpdate(call.body);
    const current = await latest(call);
    const clientId = call.params.agent_id ?? "";
    // Under a key, the version this update makes: a retry updates (or finds) that one, never the
    // one after it. The hash covers the agent too, so one key cannot update two agents.
    const { id, first } = await createIdOf(
      deps.keys,
      call,
      "agents.update",
      () => String(current.version + 1),
      { agent_id: clientId, body: call.body },
    );
    const target = Number(id);
    const base = first ? current : await store.getAgent(current.agentId, target - 1);
    if (!base) throw agentNotFound(clientId, target - 1);
    const draft = await updateDraftOf(store, base, patch, mcpServers);
    if (!first) {
      const made = await store.getAgent(current.agentId, target);
      if (made && sameContent(made, draft)) return { status: 200, body: shown(made, call) };
      if (made) throw agentVersionConflict(clientId, target - 1, current.version);
    }
    const updated = await store.updateAgent({ ...draft, expectedVersion: target - 1 });
    return { status: 200, body: shown(updated, call) };
  });

  routes.add("GET", "/v1/agents", async (call) => {
    const query = pageQueryOf(call.query);
    const page = await cursorPage(store, `${call.scope.prefix}${AGENT_ID_PREFIX}`, {
      ...query,
      ...(query.after !== undefined && { after: call.scope.toStore(query.after, "after") }),
    });
    return {
      status: 200,
      body: listPage(
        page.agents.map((a) => shown(a, call)),
        (agent) => agent.id,
        page.hasMore,
      ),
    };
  });

  routes.add("DELETE", "/v1/agents/:agent_id", async (call) => {
    const clientId = call.params.agent_id ?? "";
    const deleted = await store.deleteAgent(call.scope.toStore(clientId, "agent_id"));
    if (!deleted) throw agentNotFound(clientId);
    return { status: 200, body: { id: clientId, object: "agent.deleted", deleted: true } };
  });
}

/**
 * Version 1 of the agent, or the one an attempt racing this one made under the same key (the id
 * is the key's, so a taken id is that attempt's).
 */
export async function createOnce(
  store: AgentStore,
  draft: Parameters<AgentStore["createAgent"]>[0],
): Promise<AgentVersion> {
  try {
    return await store.createAgent(draft);
  } catch (error) {
    if (!isTetherError(error, "agent_already_exists")) throw error;
    const made = await store.getAgent(draft.agentId, 1);
    if (!made) throw error;
    return made;
  }
}

/**
 * The update's fields over the agent's: a field given replaces (`metadata` and `tools` whole),
 * `null` clears; `text` and `reasoning` are merged one level, so `{text: {verbosity}}` keeps the
 * format.
 */
export function mergeUpdate(current: AgentBody, patch: AgentBody): AgentBody {
  const nested = <T extends object>(was: T | null | undefined, given: T | null | undefined) =>
    given === undefined ? was : given === null ? null : { ...was, ...given };
  return {
    ...current,
    ...patch,
    text: nested(current.text, patch.text),
    reasoning: nested(current.reasoning, patch.reasoning),
  };
}

/**
 * The settings of a stored definition the Agent object does not show (an agent made over gRPC may
 * have a temperature, budgets, …): an update through the door keeps them as they were.
 */
function notShown(current: AgentVersion): Partial<AgentDefinition> {
  const {
    model: _model,
    systemPrompt: _systemPrompt,
    clientTools: _clientTools,
    serverTools: _serverTools,
    responseFormat: _responseFormat,
    metadata: _metadata,
    createdAtMs: _createdAtMs,
    echo: _echo,
    ...rest
  } = decodeAgentDefinition(current.definition);
  return rest;
}

/** When the agent's first version was made: carried in the definition once the door wrote it. */
type UpdateDraft = Omit<Parameters<AgentStore["updateAgent"]>[0], "expectedVersion">;

/** The version an update makes of `base`: the patch merged over what the client sees of it. */
async function updateDraftOf(
  store: AgentStore,
  base: AgentVersion,
  patch: AgentBody,
  mcpServers: ReadonlySet<string>,
): Promise<UpdateDraft> {
  const merged = mergeUpdate(bodyOf(base), patch);
  const parts = definitionOf(merged, mcpServers, await firstCreatedAt(store, base));
  return {
    agentId: base.agentId,
    displayName: parts.displayName,
    definition: encodeAgentDefinition({ ...notShown(base), ...parts.definition }),
  };
}

/** Whether a stored version is what a draft would make (a keyed retry finds its own update). */
const sameContent = (made: AgentVersion, draft: UpdateDraft): boolean =>
  made.displayName === draft.displayName && made.definition === draft.definition;

async function firstCreatedAt(store: AgentStore, current: AgentVersion): Promise<number> {
  const carried = decodeAgentDefinition(current.definition).createdAtMs;
  if (carried !== undefined) return carried;
  if (current.version === 1) return current.createdAtMs;
  const first = await store.getAgent(current.agentId, 1);
  return first?.createdAtMs ?? current.createdAtMs;
}
