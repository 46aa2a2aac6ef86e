// `GET /v1/agents/sessions`: the tenant's door-made sessions (`sess_…` ids, which sort newest
// first) as cursor pages, with the `agent_id` and `metadata[key]=value` filters (ADR 0037). There
// is no store read of sessions by creation or by metadata: this walks the session index under the
// tenant's `sess_` prefix in id order (the store's listSessions, 100 ids a step) and reads each
// step's summaries in one batched read (readSessionSummaries), filtering as it goes. Unfiltered
// and newest first, a page costs one or two such steps; a filter costs a step per 100 sessions
// passed over; `order=asc` reads the tenant's door sessions whole and turns them round.
import { bindingOf } from "../domain/agent-binding.js";
import type { SessionId } from "../domain/ids.js";
import type { SessionSummary } from "../domain/session.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { TenantScope } from "../api/tenancy.js";
import type { PageQuery } from "./cursor-page.js";
import { SESSION_ID_PREFIX } from "./session-object.js";

const STEP = 100;

export interface SessionFilter {
  /** The client's agent id the session is pinned to. */
  agentId?: string;
  metadata: Readonly<Record<string, string>>;
}

/** `metadata[key]=value` pairs of a query, and its `agent_id`. */
export function sessionFilterOf(query: Readonly<Record<string, string>>): SessionFilter {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    const named = /^metadata\[(.+)\]$/u.exec(key);
    if (named?.[1] !== undefined) metadata[named[1]] = value;
  }
  return { ...(query.agent_id && { agentId: query.agent_id }), metadata };
}

export interface SessionPage {
  sessions: SessionSummary[];
  hasMore: boolean;
}

export async function sessionPage(
  store: Pick<RuntimeStore, "listSessions" | "readSessionSummaries">,
  scope: TenantScope,
  query: PageQuery,
  filter: SessionFilter,
): Promise<SessionPage> {
  const keeps = (s: SessionSummary) => matches(s, scope, filter);
  const prefix = `${scope.prefix}${SESSION_ID_PREFIX}`;
  const after = query.after === undefined ? undefined : scope.toStore(query.after, "after");
  if (query.order === "desc") {
    const found: SessionSummary[] = [];
    let cursor: string | undefined = after;
    let more = true;
    while (more && found.length <= query.limit) {
      const page = await store.listSessions({
        prefix,
        ...(cursor !== undefined && { cursor }),
        limit: STEP,
      });
      found.push(...(await store.readSessionSummaries(page.sessionIds)).filter(keeps));
      cursor = page.nextCursor || undefined;
      more = cursor !== undefined;
    }
    return { sessions: found.slice(0, query.limit), hasMore: found.length > query.limit };
  }
  const ids: SessionId[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({
      prefix,
      ...(cursor !== undefined && { cursor }),
      limit: STEP,
    });
    ids.push(...page.sessionIds);
    cursor = page.nextCursor || undefined;
  } while (cursor !== undefined);
  const older = ids.reverse().filter((id) => after === undefined || id < after);
  const found: SessionSummary[] = [];
  for (let at = 0; at < older.length && found.length <= query.limit; at += STEP) {
    const step = older.slice(at, at + STEP);
    found.push(...(await store.readSessionSummaries(step)).filter(keeps));
  }
  return { sessions: found.slice(0, query.limit), hasMore: found.length > query.limit };
}

function matches(s: SessionSummary, scope: TenantScope, filter: SessionFilter): boolean {
  if (filter.agentId !== undefined) {
    const binding = bindingOf(s.metadata);
    if (!binding || scope.toClient(binding.agentId) !== filter.agentId) return false;
  }
  return Object.entries(filter.metadata).every(([key, value]) => s.metadata[key] === value);
}
