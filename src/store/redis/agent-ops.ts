// Agents of the Redis store: a head hash and a version hash per agent in the agent's own slot, each
// change one script; an index (a hint, like the session index) serves listing.
import type { AgentDraft, AgentListPage, AgentUpdate, AgentVersion } from "../../domain/agents.js";
import {
  agentAlreadyExists,
  agentNotFound,
  agentVersionConflict,
} from "../../domain/resource-errors.js";
import { int, str } from "./codec.js";
import type { RedisContext } from "./context.js";
import { REPLY } from "./replies.js";
import { toStoreError, type ScriptReply } from "./scripts.js";

const decode = (reply: ScriptReply): AgentVersion => JSON.parse(str(reply, 1)) as AgentVersion;

export async function createAgent(ctx: RedisContext, draft: AgentDraft): Promise<AgentVersion> {
  const k = ctx.agentKeys(draft.agentId);
  const reply = await ctx.scripts.run(
    "createAgent",
    [k.head, k.versions],
    [draft.agentId, draft.displayName, draft.definition],
  );
  if (reply[0] === REPLY.EXISTS) throw agentAlreadyExists(draft.agentId);
  await ctx.redis.zadd(ctx.agentIndexKey, 0, draft.agentId).catch(() => undefined);
  return decode(reply);
}

export async function updateAgent(ctx: RedisContext, update: AgentUpdate): Promise<AgentVersion> {
  const k = ctx.agentKeys(update.agentId);
  const reply = await ctx.scripts.run(
    "updateAgent",
    [k.head, k.versions],
    [update.agentId, update.expectedVersion, update.displayName, update.definition],
  );
  if (reply[0] === REPLY.NONE) throw agentNotFound(update.agentId);
  if (reply[0] === REPLY.VERSION_CONFLICT) {
    throw agentVersionConflict(update.agentId, update.expectedVersion, int(reply, 1));
  }
  return decode(reply);
}

export async function getAgent(
  ctx: RedisContext,
  agentId: string,
  version: number | undefined,
): Promise<AgentVersion | undefined> {
  const k = ctx.agentKeys(agentId);
  const reply = await ctx.scripts.run("getAgent", [k.head, k.versions], [version ?? ""]);
  return reply[0] === REPLY.OK ? decode(reply) : undefined;
}

export async function deleteAgent(ctx: RedisContext, agentId: string): Promise<boolean> {
  const reply = await ctx.scripts.run("deleteAgent", [ctx.agentKeys(agentId).head], []);
  await ctx.redis.zrem(ctx.agentIndexKey, agentId).catch(() => undefined);
  return reply[0] === REPLY.OK;
}

export async function listAgents(
  ctx: RedisContext,
  options: { prefix?: string; cursor?: string; limit: number },
): Promise<AgentListPage> {
  const prefix = options.prefix ?? "";
  const cursor = options.cursor ?? "";
  const min = cursor !== "" && cursor >= prefix ? `(${cursor}` : `[${prefix}`;
  const max = prefix === "" ? "+" : `[${prefix}\u00ff`;
  let ids: string[];
  try {
    ids = await ctx.redis.zrangebylex(ctx.agentIndexKey, min, max, "LIMIT", 0, options.limit + 1);
  } catch (error) {
    throw toStoreError(error);
  }
  const page = ids.slice(0, options.limit);
  // The index is a hint: an agent deleted since it was listed is skipped.
  const latest = await Promise.all(page.map((id) => getAgent(ctx, id, undefined)));
  return {
    agents: latest.filter((a): a is AgentVersion => a !== undefined),
    nextCursor: ids.length > options.limit ? page.at(-1) : undefined,
  };
}
