// The Agents API's turns and items (ADR 0037, "Items and turns"): a session's turns from the
// durable turn records the store writes in the steps that start, park and commit them, and its
// items from the committed transcript, named by the events' own rule (item-ids.ts). Pages are
// the API's cursor pages: `order` desc unless asked (the SDK's default), `after` an id exclusive
// in that order, `limit` 1-100 (20 unless asked). A running turn's items are listed once it
// commits: until then the stream is where they show.
import { bindingOf } from "../domain/agent-binding.js";
import { decodeAgentDefinition } from "../domain/agents.js";
import { invalidArgument, sessionNotFound, TetherError } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { TurnRecord } from "../domain/turn-records.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { decodeCommitted } from "../runtime/index.js";
import { listPage, pageQueryOf, type PageQuery } from "./cursor-page.js";
import { turnShape } from "./event-objects.js";
import type { Call, RouteTable } from "./route-table.js";
import { transcriptItems, type ListedItem } from "./transcript-items.js";
import { turnEndOf } from "./turn-outcome-codes.js";

export type TurnRouteStore = Pick<
  RuntimeStore,
  "readSessionSummaries" | "readTurns" | "readTurn" | "loadSession" | "getAgent"
>;

const SESSION = "/v1/agents/sessions/:session_id";

/** Unix seconds, as the API's timestamps. */
const seconds = (ms: number | undefined) => (ms === undefined ? undefined : Math.floor(ms / 1000));

export function turnObject(
  record: TurnRecord,
  sessionId: string,
  agentId: string,
): Record<string, unknown> {
  const end = record.outcome && turnEndOf(record.outcome);
  const times = {
    createdAt: seconds(record.createdAtMs) ?? 0,
    ...(record.startedAtMs !== undefined && { startedAt: seconds(record.startedAtMs) }),
    ...(record.completedAtMs !== undefined && { completedAt: seconds(record.completedAtMs) }),
  };
  return turnShape({
    id: record.turnId,
    sessionId,
    status: record.status,
    agentId,
    ...(times as { createdAt: number; startedAt?: number; completedAt?: number }),
    ...(record.usage && { usage: record.usage }),
    ...(end?.status === "failed" && { error: end.error }),
  });
}

/** A page of listed items, `after` an item id of the list. */
function itemPage(items: ListedItem[], query: PageQuery) {
  const ordered = query.order === "asc" ? items : [...items].reverse();
  let from = 0;
  if (query.after !== undefined) {
    const at = ordered.findIndex((i) => i.id === query.after);
    if (at < 0) throw invalidArgument("after", "names no item of this list");
    from = at + 1;
  }
  const page = ordered.slice(from, from + query.limit).map((i) => i.item);
  return listPage(page, (i) => String(i.id), from + query.limit < ordered.length);
}

const turnNotFound = (turnId: string) =>
  new TetherError("turn_not_found", `no turn ${turnId} in this session`);

export function addTurnRoutes(routes: RouteTable, store: TurnRouteStore): void {
  const { readTurns, readTurn } = store;
  if (!readTurns || !readTurn) return;

  /** The session's store id and its agent's id as the client names it; 404 when none. */
  async function sessionOf(call: Call): Promise<{ storeId: SessionId; agentId: string }> {
    const clientId = call.params.session_id ?? "";
    const storeId = call.scope.toStore(clientId, "session_id");
    const [summary] = await store.readSessionSummaries([storeId]);
    if (!summary) throw sessionNotFound(clientId);
    const binding = bindingOf(summary.metadata);
    return { storeId, agentId: binding ? call.scope.toClient(binding.agentId) : "" };
  }

  async function itemsOf(storeId: SessionId): Promise<ListedItem[]> {
    const snapshot = await store.loadSession(storeId);
    const committed = (snapshot?.messages ?? []).map((raw) => {
      const { message, mark } = decodeCommitted(raw);
      return { message, turnId: mark.turnId };
    });
    const agent = snapshot && bindingOf(snapshot.metadata);
    const version = agent && (await store.getAgent(agent.agentId, agent.version));
    const tools = version ? decodeAgentDefinition(version.definition).clientTools : [];
    const clientTools = new Set(tools.map((t) => t.name));
    return transcriptItems(committed, (name) => clientTools.has(name));
  }

  routes.add("GET", `${SESSION}/turns`, async (call) => {
    const query = pageQueryOf(call.query);
    const { storeId, agentId } = await sessionOf(call);
    const page = await readTurns.call(store, storeId, {
      order: query.order,
      limit: query.limit,
      ...(query.after !== undefined && { after: query.after }),
    });
    const clientId = call.params.session_id ?? "";
    const data = page.turns.map((t) => turnObject(t, clientId, agentId));
    return { status: 200, body: listPage(data, (t) => String(t.id), page.hasMore) };
  });

  routes.add("GET", `${SESSION}/turns/:turn_id`, async (call) => {
    const { storeId, agentId } = await sessionOf(call);
    const turnId = call.params.turn_id ?? "";
    const record = await readTurn.call(store, storeId, turnId);
    if (!record) throw turnNotFound(turnId);
    return { status: 200, body: turnObject(record, call.params.session_id ?? "", agentId) };
  });

  routes.add("GET", `${SESSION}/items`, async (call) => {
    const query = pageQueryOf(call.query);
    const { storeId } = await sessionOf(call);
    return { status: 200, body: itemPage(await itemsOf(storeId), query) };
  });

  routes.add("GET", `${SESSION}/turns/:turn_id/items`, async (call) => {
    const query = pageQueryOf(call.query);
    const { storeId } = await sessionOf(call);
    const turnId = call.params.turn_id ?? "";
    const [record, items] = await Promise.all([
      readTurn.call(store, storeId, turnId),
      itemsOf(storeId),
    ]);
    const own = items.filter((i) => i.turnId === turnId);
    if (!record && own.length === 0) throw turnNotFound(turnId);
    return { status: 200, body: itemPage(own, query) };
  });
}
