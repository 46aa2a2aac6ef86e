// The Agents API's session endpoints (ADR 0037): create, retrieve, update, list and delete, over
// SessionService's store operations and the runtime. A session the door makes gets a server id
// `sess_…` that sorts newest first; any other session of the tenant (made over gRPC, or by a
// StreamTurn) is reachable by its own id, scoped exactly as gRPC's `session_id`.
import { setTimeout as delay } from "node:timers/promises";
import { bindingOf, checkClientMetadata } from "../domain/agent-binding.js";
import type { InputItem } from "../domain/conversation.js";
import {
  headRevisionContended,
  invalidArgument,
  isTetherError,
  sessionNotFound,
  TetherError,
} from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import { HEAD_RACE_ATTEMPTS } from "../domain/session.js";
import { createSessionIfAbsent } from "../ports/session-creation.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { TetherRuntime } from "../runtime/index.js";
import type { TenantScope } from "../api/tenancy.js";
import { newSortableId } from "./agent-ids.js";
import { createIdOf, type KeyedCreates } from "./idempotent-create.js";
import { inputItemOf } from "./event-inputs.js";
import type { AgentBody } from "./agent-object.js";
import { bodyCheck } from "./body-check.js";
import type { AdmitInput } from "./event-routes.js";
import { listPage, pageQueryOf } from "./cursor-page.js";
import type { Call, Reply, RouteTable } from "./route-table.js";
import { streamingCreateReply } from "./session-create-stream.js";
import type { SessionEventSource } from "./session-events-route.js";
import { createBinding, inlineAgentId, updateBinding } from "./session-agent.js";
import { sessionFilterOf, sessionPage } from "./session-list.js";
import { SESSION_ID_PREFIX, sessionObject, type SessionState } from "./session-object.js";
import {
  SESSION_CREATE,
  SESSION_UPDATE,
  type SessionCreateBody,
  type SessionUpdateBody,
  type UserMessageBody,
} from "./session-schemas.js";

const checkCreate = bodyCheck<SessionCreateBody>(SESSION_CREATE);
const checkUpdate = bodyCheck<SessionUpdateBody>(SESSION_UPDATE);

export interface SessionRoutesDeps {
  store: RuntimeStore;
  /** Runs the first turn of a create with `input`; without it such a create is refused. */
  runtime: Pick<TetherRuntime, "submitTurn"> | undefined;
  mcpServers: ReadonlySet<string>;
  /** The event stream a create with `stream: true` answers; without it such a create is refused. */
  events?: SessionEventSource | undefined;
  /** The tenant's quota gate for a create's input, passed before the session is made. */
  admitInput?: AdmitInput | undefined;
  /** Where a create's Idempotency-Key is kept. */
  keys: KeyedCreates;
  now?: () => number;
}

export function addSessionRoutes(routes: RouteTable, deps: SessionRoutesDeps): void {
  const { store } = deps;
  const now = deps.now ?? Date.now;

  /** Everything the AgentSession of one session is computed from; not found in the client's id. */
  async function stateOf(scope: TenantScope, storeId: SessionId): Promise<SessionState> {
    const [summary] = await store.readSessionSummaries([storeId]);
    if (!summary) throw sessionNotFound(scope.toClient(storeId));
    const binding = bindingOf(summary.metadata);
    const [calls, version] = await Promise.all([
      summary.parkedTurn ? store.readToolCalls(storeId, summary.parkedTurn.turnId) : [],
      binding ? store.getAgent(binding.agentId, binding.version) : undefined,
    ]);
    return {
      summary,
      lease: summary.lease,
      parked: summary.parkedTurn,
      calls,
      agent: version && { version, clientId: scope.toClient(version.agentId) },
    };
  }
  const shown = async (scope: TenantScope, storeId: SessionId) =>
    sessionObject(await stateOf(scope, storeId), scope.toClient(storeId), now());
  const storeIdOf = (call: Call) => call.scope.toStore(call.params.session_id ?? "", "session_id");

  routes.add("POST", "/v1/agents/sessions", async (call) => {
    const body = checkCreate(call.body);
    refuseUnserved(body, deps.events !== undefined);
    const items = body.input === undefined ? [] : itemsOf(body.input);
    if (items.length > 0 && !deps.runtime) {
      throw new TetherError("store_unavailable", "this server runs no turns: input is refused");
    }
    const metadata = body.metadata ?? {};
    checkClientMetadata(metadata);
    // Refused before anything is written: the SDK's retry of the 429 makes one session, not two.
    if (items.length > 0) await deps.admitInput?.(call.scope.tenant);
    // A streaming create is a stream from its first byte: past the tenant's concurrent_streams,
    // a 429 before anything is stored (the SDKs retry it), as for GET …/events.
    const leave = body.stream === true ? deps.events?.streams?.enter(call.scope.tenant) : undefined;
    try {
      return await create(call, body, items, metadata, leave);
    } catch (error) {
      leave?.();
      throw error;
    }
  });

  async function create(
    call: Call,
    body: SessionCreateBody,
    items: InputItem[],
    metadata: Record<string, string>,
    leave: (() => void) | undefined,
  ): Promise<Reply> {
    const created = await createIdOf(deps.keys, call, "sessions.create", () =>
      newSortableId(SESSION_ID_PREFIX),
    );
    const clientId = created.id;
    const storeId = call.scope.toStore(clientId, "id");
    // Under a key, every step below is idempotent on the key's id: a retry finishes what its
    // first attempt began (or finds it done) and answers with the same session.
    const made = !created.first && (await store.readSessionSummaries([storeId])).length > 0;
    if (!made) {
      const binding = await createBinding(
        deps,
        call.scope,
        clientId,
        body.agent_id,
        body.agent as AgentBody | undefined,
      );
      await createSessionIfAbsent(store, storeId, { ...metadata, ...binding });
    }
    // The first turn's input goes the way every door input goes (POST /events): stored, then the
    // session offered to drive; nothing runs on a session this create just made, so it is queued.
    // Its source key derives from the create's key (a message posted later under the same key is
    // `<key>` or `<key>#<n>`, never this): a retry stores no second input.
    if (items.length > 0) {
      await deps.runtime?.submitTurn({
        sessionId: storeId,
        publicSessionId: clientId,
        items,
        ...(created.key !== undefined && { clientRequestId: `${created.key}#create` }),
        ...(call.trace !== undefined && { trace: call.trace }),
        busyStrategy: "enqueue",
        clientTools: [],
        settings: {},
      });
    }
    const answer = await shown(call.scope, storeId);
    if (body.stream !== true || !deps.events) return { status: 200, body: answer };
    const session = { sessionId: storeId, publicSessionId: clientId };
    return streamingCreateReply({ events: deps.events, store }, session, answer, leave);
  }

  routes.add("GET", "/v1/agents/sessions/:session_id", async (call) => ({
    status: 200,
    body: await shown(call.scope, storeIdOf(call)),
  }));

  routes.add("POST", "/v1/agents/sessions/:session_id", async (call) => {
    const body = checkUpdate(call.body);
    const storeId = storeIdOf(call);
    const { summary } = await stateOf(call.scope, storeId);
    const patch: Record<string, string> = {};
    if (body.metadata !== undefined) {
      const next = body.metadata ?? {};
      checkClientMetadata(next);
      // Replace: every client key not given again is removed ("" removes a key).
      for (const key of Object.keys(summary.metadata)) {
        if (!key.startsWith("tether.")) patch[key] = "";
      }
      Object.assign(patch, next);
    }
    if (body.agent) {
      const clientId = call.scope.toClient(storeId);
      const agent = body.agent as AgentBody;
      Object.assign(
        patch,
        await updateBinding(deps, call.scope, clientId, summary.metadata, agent),
      );
    }
    if (Object.keys(patch).length > 0) {
      await patchMetadata(store, storeId, call.scope.toClient(storeId), patch);
    }
    return { status: 200, body: await shown(call.scope, storeId) };
  });

  routes.add("GET", "/v1/agents/sessions", async (call) => {
    const query = pageQueryOf(call.query);
    const page = await sessionPage(store, call.scope, query, sessionFilterOf(call.query));
    const data = await Promise.all(page.sessions.map((s) => shown(call.scope, s.sessionId)));
    return { status: 200, body: listPage(data, (session) => session.id, page.hasMore) };
  });

  routes.add("DELETE", "/v1/agents/sessions/:session_id", async (call) => {
    const storeId = storeIdOf(call);
    const clientId = call.scope.toClient(storeId);
    const [summary] = await store.readSessionSummaries([storeId]);
    if (!summary) throw sessionNotFound(clientId);
    if (summary.lease || summary.parkedTurn) {
      throw new TetherError(
        "session_busy",
        `session ${clientId} has a turn running or waiting: cancel it first, then delete`,
        { fields: { sessionId: clientId } },
      );
    }
    if (!(await store.deleteSession(storeId))) throw sessionNotFound(clientId);
    // Its hidden inline agent goes with it (its versions stay readable, as for every agent).
    const inline = `${call.scope.prefix}${inlineAgentId(clientId)}`;
    await store.deleteAgent(inline);
    return { status: 200, body: { id: clientId, object: "agent.session.deleted", deleted: true } };
  });
}

/** What the API offers that Tether does not serve: refused by name, before anything is stored. */
function refuseUnserved(body: SessionCreateBody, streams: boolean): void {
  if (body.stream === true && !streams) {
    throw invalidArgument("stream", "this server serves no event streams: create, then poll");
  }
  if (body.stream_options != null && body.stream !== true) {
    throw invalidArgument("stream_options", "is only allowed when stream is true");
  }
  const type = body.environment?.type ?? "none";
  if (type !== "none") {
    throw invalidArgument(
      "environment.type",
      `"${type}" is not served: Tether hosts no environments; use "none"`,
    );
  }
  if (body.vault_ids && body.vault_ids.length > 0) {
    throw invalidArgument("vault_ids", "vaults are not served by Tether: leave it empty");
  }
}

/** `input` as the turn's items: a string is one text; messages' parts in order. */
function itemsOf(input: string | UserMessageBody[]): InputItem[] {
  if (typeof input === "string") return [{ type: "text", text: input }];
  return input.flatMap((message, i) => {
    if (typeof message.content === "string")
      return [{ type: "text" as const, text: message.content }];
    return message.content.map((part, j): InputItem => {
      const field = `input[${i}].content[${j}]`;
      if (part.type === "input_text" && part.text === undefined) {
        throw invalidArgument(`${field}.text`, "is required");
      }
      if (part.type === "input_image" && part.image_url === undefined) {
        throw invalidArgument(`${field}.image_url`, "is required");
      }
      // The one conversion of a content part the door has (POST /events uses it too).
      return inputItemOf(part);
    });
  });
}

/**
 * A metadata commit on the head as it is now: UpdateSessionMetadata without a caller's revision,
 * re-read and tried again (within bounds) when a turn's commit takes the head first.
 */
async function patchMetadata(
  store: RuntimeStore,
  storeId: SessionId,
  clientId: string,
  patch: Record<string, string>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const [current] = await store.readSessionSummaries([storeId]);
    if (!current) throw sessionNotFound(clientId);
    try {
      await store.commit({
        sessionId: storeId,
        expectedHeadRevision: current.headRevision,
        appendMessages: [],
        metadataPatch: patch,
      });
      return;
    } catch (error) {
      if (!isTetherError(error, "head_revision_conflict")) throw error;
      if (attempt === HEAD_RACE_ATTEMPTS) throw headRevisionContended(storeId, attempt);
      await delay(Math.random() * Math.min(50, 2 ** attempt));
    }
  }
}
