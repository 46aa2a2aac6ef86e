// SessionService over a RuntimeStore: create, list, delete and update a session (its metadata and
// its agent binding); GetSession and the history RPCs (transcript pages, fork, rewind, compaction)
// are session-history.ts's.
// A session exists once it has a commit; creation is the commit from head 0, so two racing creates
// of one id cannot both succeed, and a session its first input created (ADR 0003) is ALREADY_EXISTS.
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  headRevisionContended,
  invalidArgument,
  isTetherError,
  sessionAlreadyExists,
  sessionNotFound,
} from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import { HEAD_RACE_ATTEMPTS } from "../domain/session.js";
import type { SessionService } from "../gen/tether/v1/session_service_pb.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type RuntimeStore } from "../ports/runtime-store.js";
import { createSessionIfAbsent } from "../ports/session-creation.js";
import { checkClientMetadata } from "../domain/agent-binding.js";
import { agentBindingPatch } from "../runtime/index.js";
import { fromUint64 } from "./convert/scalars.js";
import { decodePageToken, encodePageToken } from "./convert/page-token.js";
import { sessionToProto } from "./convert/session.js";
import { pageSizeOf } from "./page-size.js";
import { createSessionHistoryRpcs, type CompactSessionFn } from "./session-history.js";
import { createSessionReads, type SessionReads } from "./session-reads.js";
import { scopeOf, type TenantScope } from "./tenancy.js";

export type { CompactSessionFn } from "./session-history.js";

export interface SessionServiceOptions {
  store: RuntimeStore;
  /** CompactSession's work (the runtime's); without it CompactSession is refused. */
  compact?: CompactSessionFn;
  /** The largest answer the transport writes (TETHER_MAX_MESSAGE_BYTES); 4 MiB by default. */
  maxResponseBytes?: number;
}

/** Longest pause between two attempts: each waits a random part of it, so racers spread out. */
const UPDATE_BACKOFF_MS = 50;

export function createSessionService(
  options: SessionServiceOptions,
): ServiceImpl<typeof SessionService> {
  const { store } = options;
  const reads = createSessionReads(store);
  const history = createSessionHistoryRpcs(
    {
      store,
      compact: options.compact,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    },
    reads,
  );
  return { ...history, ...sessionRpcs(store, reads) };
}

/** The binding a request names (agent_id, agent_version; none: unbound) as a metadata patch. */
function bindingFor(store: RuntimeStore, scope: TenantScope, agentId: string, version: bigint) {
  if (agentId === "" && version !== 0n) {
    throw invalidArgument("agent_version", "needs an agent_id");
  }
  const pin =
    agentId === ""
      ? undefined
      : {
          agentId: scope.toStore(agentId, "agent_id"),
          clientAgentId: agentId,
          version: fromUint64(version, "agent_version"),
        };
  return agentBindingPatch(store, pin);
}

/** The RPCs over the session itself: create, list, delete, and its metadata and binding. */
function sessionRpcs(store: RuntimeStore, reads: SessionReads) {
  const { load, answer } = reads;

  /**
   * A metadata commit. A caller-given revision is a real CAS: its conflict is the answer (ABORTED).
   * Without one (0), the update re-reads the head and tries again until it applies, within bounds.
   */
  async function patch(
    scope: TenantScope,
    storeId: SessionId,
    expectedHeadRevision: bigint,
    metadataPatch: Record<string, string>,
  ) {
    const expected = Number(expectedHeadRevision);
    if (!Number.isSafeInteger(expected)) {
      throw invalidArgument("expected_head_revision", "is out of range");
    }
    for (let attempt = 1; ; attempt++) {
      const current = await load(scope, storeId);
      try {
        await store.commit({
          sessionId: storeId,
          expectedHeadRevision: expected === 0 ? current.headRevision : expected,
          appendMessages: [],
          metadataPatch,
        });
        return answer(scope, storeId);
      } catch (error) {
        if (expected !== 0 || !isTetherError(error, "head_revision_conflict")) throw error;
        if (attempt === HEAD_RACE_ATTEMPTS) throw headRevisionContended(storeId, attempt);
        await delay(Math.random() * Math.min(UPDATE_BACKOFF_MS, 2 ** attempt));
      }
    }
  }

  return {
    async createSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId || randomUUID(), "session_id");
      checkClientMetadata(req.metadata);
      const binding = await bindingFor(store, scope, req.agentId, req.agentVersion);
      // A new session is unbound already: only a named agent adds keys.
      const metadata = { ...req.metadata, ...(req.agentId !== "" && binding) };
      if (!(await createSessionIfAbsent(store, storeId, metadata))) {
        throw sessionAlreadyExists(scope.toClient(storeId));
      }
      return answer(scope, storeId);
    },

    async listSessions(req, ctx) {
      const scope = scopeOf(ctx.values);
      const limit = pageSizeOf("ListSessions", req.pageSize);
      const after = decodePageToken(req.pageToken);
      const page = await store.listSessions({
        prefix: scope.prefix,
        ...(after === undefined ? {} : { cursor: scope.toStore(after, "page_token") }),
        limit,
      });
      // One read for the page; the index is a hint, so a session deleted since is left out.
      const summaries = await store.readSessionSummaries(page.sessionIds);
      return {
        sessions: summaries.map((s) => sessionToProto(s, s.lease, scope, s.parkedTurn)),
        nextPageToken: page.nextCursor ? encodePageToken(scope.toClient(page.nextCursor)) : "",
      };
    },

    async deleteSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId, "session_id");
      if (!(await store.deleteSession(storeId))) throw sessionNotFound(req.sessionId);
      return {};
    },

    async updateSessionMetadata(req, ctx) {
      const scope = scopeOf(ctx.values);
      checkClientMetadata(req.metadata);
      const storeId = scope.toStore(req.sessionId, "session_id");
      return patch(scope, storeId, req.expectedHeadRevision, { ...req.metadata });
    },

    async updateSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId, "session_id");
      const binding = await bindingFor(store, scope, req.agentId, req.agentVersion);
      return patch(scope, storeId, req.expectedHeadRevision, binding);
    },
  } satisfies Partial<ServiceImpl<typeof SessionService>>;
}
