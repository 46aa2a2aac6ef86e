// The Agents API's cursor pages over the agent store (ADR 0037): `limit` 1-100 (20 unless asked),
// `order` desc (newest first, the default) or asc, `after` an id exclusive in that order. Agent
// ids sort newest first (agent-ids.ts), so desc is the store's own order, one read per page; asc
// reads the tenant's agents whole and turns them round, which is fine for the few agents a
// tenant defines.
import type { AgentVersion } from "../domain/agents.js";
import { invalidArgument } from "../domain/errors.js";
import type { AgentStore } from "../ports/runtime-store.js";

export interface PageQuery {
  limit: number;
  order: "asc" | "desc";
  after?: string;
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
/** The store's own largest page, for the asc scan. */
const SCAN_PAGE = 1000;

export function pageQueryOf(query: Readonly<Record<string, string>>): PageQuery {
  const rawLimit = query.limit;
  const limit = rawLimit === undefined ? DEFAULT_LIMIT : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalidArgument("limit", `must be an integer from 1 to ${MAX_LIMIT}`);
  }
  const order = query.order ?? "desc";
  if (order !== "asc" && order !== "desc") throw invalidArgument("order", "must be asc or desc");
  return { limit, order, ...(query.after && { after: query.after }) };
}

/**
 * A list answer as both SDKs page it: `data`, the first and last ids (`last_id` is the next
 * page's `after`; the SDKs stop at `has_more: false`, an empty page or a null id).
 */
export function listPage<T>(data: readonly T[], idOf: (t: T) => string, hasMore: boolean) {
  const first = data[0];
  const last = data.at(-1);
  return {
    object: "list",
    data,
    first_id: first === undefined ? null : idOf(first),
    last_id: last === undefined ? null : idOf(last),
    has_more: hasMore,
  };
}

export interface AgentPage {
  agents: AgentVersion[];
  hasMore: boolean;
}

/** One page of the agents whose store ids start with `prefix`; `after` is a store id. */
export async function cursorPage(
  store: AgentStore,
  prefix: string,
  query: PageQuery,
): Promise<AgentPage> {
  if (query.order === "desc") {
    const page = await store.listAgents({
      prefix,
      ...(query.after !== undefined && { cursor: query.after }),
      limit: query.limit,
    });
    return { agents: page.agents, hasMore: page.nextCursor !== undefined };
  }
  const all: AgentVersion[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listAgents({
      prefix,
      ...(cursor !== undefined && { cursor }),
      limit: SCAN_PAGE,
    });
    all.push(...page.agents);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const after = query.after;
  const older = all.reverse().filter((a) => after === undefined || a.agentId < after);
  return { agents: older.slice(0, query.limit), hasMore: older.length > query.limit };
}
