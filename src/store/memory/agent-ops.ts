// Agents of the memory store: each operation runs synchronously, so it is one atomic step.
import type { AgentDraft, AgentListPage, AgentUpdate, AgentVersion } from "../../domain/agents.js";
import {
  agentAlreadyExists,
  agentNotFound,
  agentVersionConflict,
} from "../../domain/resource-errors.js";
import type { MemoryContext } from "./context.js";
import { copy } from "./session-cell.js";

export function createAgent(ctx: MemoryContext, draft: AgentDraft): Promise<AgentVersion> {
  if (ctx.agents.has(draft.agentId)) return Promise.reject(agentAlreadyExists(draft.agentId));
  const first: AgentVersion = { ...draft, version: 1, createdAtMs: ctx.clock.nowMs() };
  ctx.agents.set(draft.agentId, { versions: [first], deleted: false });
  return Promise.resolve(copy(first));
}

export function updateAgent(ctx: MemoryContext, update: AgentUpdate): Promise<AgentVersion> {
  const record = ctx.agents.get(update.agentId);
  const latest = record?.versions.at(-1);
  if (!record || record.deleted || !latest) return Promise.reject(agentNotFound(update.agentId));
  if (latest.version !== update.expectedVersion) {
    return Promise.reject(
      agentVersionConflict(update.agentId, update.expectedVersion, latest.version),
    );
  }
  const next: AgentVersion = {
    agentId: update.agentId,
    displayName: update.displayName,
    definition: update.definition,
    version: latest.version + 1,
    createdAtMs: ctx.clock.nowMs(),
  };
  record.versions.push(next);
  return Promise.resolve(copy(next));
}

export function getAgent(
  ctx: MemoryContext,
  agentId: string,
  version: number | undefined,
): Promise<AgentVersion | undefined> {
  const record = ctx.agents.get(agentId);
  if (!record) return Promise.resolve(undefined);
  if (version === undefined) {
    return Promise.resolve(record.deleted ? undefined : copy(record.versions.at(-1)));
  }
  return Promise.resolve(copy(record.versions[version - 1]));
}

export function listAgents(
  ctx: MemoryContext,
  options: { prefix?: string; cursor?: string; limit: number },
): Promise<AgentListPage> {
  const ids = [...ctx.agents.keys()]
    .filter((id) => !ctx.agents.get(id)?.deleted)
    .filter((id) => options.prefix === undefined || id.startsWith(options.prefix))
    .filter((id) => options.cursor === undefined || id > options.cursor)
    .sort();
  const page = ids.slice(0, options.limit);
  const agents = page.flatMap((id) => {
    const latest = ctx.agents.get(id)?.versions.at(-1);
    return latest ? [copy(latest)] : [];
  });
  return Promise.resolve({
    agents,
    nextCursor: ids.length > options.limit ? page.at(-1) : undefined,
  });
}

export function deleteAgent(ctx: MemoryContext, agentId: string): Promise<boolean> {
  const record = ctx.agents.get(agentId);
  if (!record || record.deleted) return Promise.resolve(false);
  record.deleted = true;
  return Promise.resolve(true);
}
