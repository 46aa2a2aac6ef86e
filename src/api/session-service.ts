// SessionService over a RuntimeStore: create, read, list, delete, update metadata, fork and
// rewind (the store's history operations, domain/history.ts). A session
// exists once it has a commit; creation is the commit from head 0, so two racing creates of one
// id cannot both succeed, and a session its first input created (ADR 0003) is ALREADY_EXISTS.
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  headRevisionContended,
  invalidArgument,
  isTetherError,
  revisionOutOfRange,
  responseTooLarge,
  revisionUnavailable,
  sessionAlreadyExists,
  sessionNotFound,
  TetherError,
} from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import { HEAD_RACE_ATTEMPTS, type SessionSnapshot } from "../domain/session.js";
import {
  GetSessionResponseSchema,
  ListMessagesResponseSchema,
  type SessionService,
} from "../gen/tether/v1/session_service_pb.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type RuntimeStore } from "../ports/runtime-store.js";
import {
  encodedSize,
  fits,
  fittingCount,
  responseBudget,
  type ResponseBudget,
} from "./response-fit.js";
import { checkClientMetadata } from "../domain/agent-binding.js";
import type { CompactionItem } from "../domain/conversation.js";
import { compactionPartToProto } from "./convert/context.js";
import { agentBindingPatch } from "../runtime/index.js";
import { fromUint64 } from "./convert/scalars.js";
import {
  decodePageToken,
  decodeRevisionToken,
  encodePageToken,
  encodeRevisionToken,
  LIST_PAGE,
  pageSizeOf,
} from "./convert/page-token.js";
import { sessionToProto } from "./convert/session.js";
import { messagePage, transcriptMessage } from "./convert/transcript.js";
import { scopeOf, type TenantScope } from "./tenancy.js";

export interface SessionServiceOptions {
  store: RuntimeStore;
  /** CompactSession's work (the runtime's); without it CompactSession is refused. */
  compact?: CompactSessionFn;
  /** The largest answer the transport writes (TETHER_MAX_MESSAGE_BYTES); 4 MiB by default. */
  maxResponseBytes?: number;
}

export type CompactSessionFn = (
  sessionId: SessionId,
  instructions: string | undefined,
) => Promise<{ item: CompactionItem | undefined }>;

/** Longest pause between two attempts: each waits a random part of it, so racers spread out. */
const UPDATE_BACKOFF_MS = 50;

export function createSessionService(
  options: SessionServiceOptions,
): ServiceImpl<typeof SessionService> {
  const { store } = options;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_MESSAGE_BYTES;

  async function load(scope: TenantScope, storeId: SessionId): Promise<SessionSnapshot> {
    const snapshot = await store.loadSession(storeId);
    if (!snapshot) throw sessionNotFound(scope.toClient(storeId));
    return snapshot;
  }

  /** The binding a request names (agent_id, agent_version; none: unbound) as a metadata patch. */
  function bindingFor(scope: TenantScope, agentId: string, version: bigint) {
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
        return { session: await view(scope, await load(scope, storeId)) };
      } catch (error) {
        if (expected !== 0 || !isTetherError(error, "head_revision_conflict")) throw error;
        if (attempt === HEAD_RACE_ATTEMPTS) throw headRevisionContended(storeId, attempt);
        await delay(Math.random() * Math.min(UPDATE_BACKOFF_MS, 2 ** attempt));
      }
    }
  }

  /** The transcript at a revision GetSession was asked for (`at_revision`). */
  async function transcriptAt(snapshot: SessionSnapshot, revision: number): Promise<string[]> {
    const { sessionId, headRevision } = snapshot;
    if (revision === headRevision) return snapshot.messages;
    if (revision > headRevision) {
      throw revisionOutOfRange(sessionId, "at_revision", revision, headRevision);
    }
    try {
      return (await store.readRevision(sessionId, revision)).messages;
    } catch (error) {
      if (isTetherError(error, "revision_unavailable")) {
        const first = Number(error.fields["firstKeptRevision"]);
        throw revisionUnavailable(sessionId, "at_revision", revision, first);
      }
      throw error;
    }
  }

  async function view(scope: TenantScope, snapshot: SessionSnapshot) {
    const [lease, parked] = await Promise.all([
      store.currentLease(snapshot.sessionId),
      store.readParkedTurn(snapshot.sessionId),
    ]);
    return sessionToProto(snapshot, lease, scope, parked);
  }

  /** A ListMessages page cut at whole revisions to fit the response limit (the token goes on). */
  function fitMessagePage(page: ReturnType<typeof messagePage>, budget: ResponseBudget) {
    const answer = (messages: typeof page.messages, next: number) => ({
      messages,
      nextAfterRevision: BigInt(next),
      nextPageToken: encodeRevisionToken(next),
    });
    const revisions = [...new Set(page.messages.map((m) => m.revision))];
    const firstRevisions = (k: number) => {
      if (k === revisions.length) return answer(page.messages, page.nextAfterRevision);
      const kept = new Set(revisions.slice(0, k));
      const last = Number(revisions[k - 1] ?? 0n);
      return answer(
        page.messages.filter((m) => kept.has(m.revision)),
        last,
      );
    };
    // A page ending at a revision 0 (written before revisions were stamped) cannot be resumed.
    const n = fittingCount(
      revisions.length,
      (k) =>
        (k === revisions.length || revisions[k - 1] !== 0n) &&
        fits(ListMessagesResponseSchema, firstRevisions(k), budget),
    );
    if (n === 0 && revisions.length > 0) {
      const size = encodedSize(ListMessagesResponseSchema, firstRevisions(1), budget.json);
      const remedy = `revision ${revisions[0]} alone passes it; raise the limit`;
      throw responseTooLarge("page_size", size, budget.maxBytes, remedy);
    }
    return firstRevisions(n);
  }

  return {
    async createSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId || randomUUID(), "session_id");
      checkClientMetadata(req.metadata);
      const binding = await bindingFor(scope, req.agentId, req.agentVersion);
      // A new session is unbound already: only a named agent adds keys.
      const metadata = { ...req.metadata, ...(req.agentId !== "" && binding) };
      try {
        await store.commit({
          sessionId: storeId,
          expectedHeadRevision: 0,
          appendMessages: [],
          ...(Object.keys(metadata).length > 0 ? { metadataPatch: metadata } : {}),
        });
      } catch (error) {
        if (isTetherError(error, "head_revision_conflict")) {
          throw sessionAlreadyExists(scope.toClient(storeId));
        }
        throw error;
      }
      return { session: await view(scope, await load(scope, storeId)) };
    },

    async getSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId, "session_id");
      const at = fromUint64(req.atRevision, "at_revision");
      if (at !== 0 && !req.includeMessages) {
        throw invalidArgument("at_revision", "needs include_messages");
      }
      const snapshot = await load(scope, storeId);
      const messages = !req.includeMessages
        ? []
        : await transcriptAt(snapshot, at === 0 ? snapshot.headRevision : at);
      const answer = {
        session: await view(scope, snapshot),
        messages,
        transcript: messages.map(transcriptMessage),
      };
      // A transcript can outgrow one answer (inline images travel in full in `messages`):
      // refused naming the field, pointing at the RPC that pages, never a transport failure.
      if (req.includeMessages) {
        const budget = responseBudget(ctx, maxResponseBytes);
        const size = encodedSize(GetSessionResponseSchema, answer, budget.json);
        if (size > budget.maxBytes) {
          throw responseTooLarge(
            "include_messages",
            size,
            budget.maxBytes,
            at === 0
              ? "page it with tether.v1.SessionService/ListMessages"
              : "page it with tether.v1.SessionService/ListMessages on a fork at that revision",
          );
        }
      }
      return answer;
    },

    async forkSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const sourceId = scope.toStore(req.sessionId, "session_id");
      const targetId = scope.toStore(req.newSessionId || randomUUID(), "new_session_id");
      let at = fromUint64(req.atRevision, "at_revision");
      if (at === 0) at = (await load(scope, sourceId)).headRevision;
      await store.forkSession({ sourceId, targetId, atRevision: at });
      return { session: await view(scope, await load(scope, targetId)) };
    },

    async rewindSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId, "session_id");
      const toRevision = fromUint64(req.toRevision, "to_revision");
      if (toRevision === 0) throw invalidArgument("to_revision", "must be a revision (1 or more)");
      let expected = fromUint64(req.expectedHeadRevision, "expected_head_revision");
      if (expected === 0) expected = (await load(scope, storeId)).headRevision;
      await store.rewindSession({ sessionId: storeId, toRevision, expectedHeadRevision: expected });
      return { session: await view(scope, await load(scope, storeId)) };
    },

    async compactSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId, "session_id");
      await load(scope, storeId);
      if (!options.compact)
        throw new TetherError("internal", "this server cannot compact sessions");
      const { item } = await options.compact(storeId, req.instructions);
      return {
        session: await view(scope, await load(scope, storeId)),
        compacted: item !== undefined,
        ...(item && { compaction: compactionPartToProto(item) }),
      };
    },

    async listMessages(req, ctx) {
      const scope = scopeOf(ctx.values);
      const limit = pageSizeOf(req.pageSize, LIST_PAGE);
      const filter = fromUint64(req.afterRevision, "after_revision");
      const fromToken = decodeRevisionToken(req.pageToken);
      if (fromToken !== undefined && filter !== 0) {
        throw invalidArgument("page_token", "cannot be combined with after_revision");
      }
      const snapshot = await load(scope, scope.toStore(req.sessionId, "session_id"));
      const page = messagePage(snapshot.messages, fromToken ?? filter, limit);
      return fitMessagePage(page, responseBudget(ctx, maxResponseBytes));
    },

    async listSessions(req, ctx) {
      const scope = scopeOf(ctx.values);
      const limit = pageSizeOf(req.pageSize, LIST_PAGE);
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
      const binding = await bindingFor(scope, req.agentId, req.agentVersion);
      return patch(scope, storeId, req.expectedHeadRevision, binding);
    },
  };
}
