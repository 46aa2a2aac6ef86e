// SessionService's RPCs over a session's history: its transcript (GetSession at a revision,
// ListMessages in pages held to the response limit), fork, rewind and compaction (the store's
// history operations, domain/history.ts). session-service.ts serves them beside the session's own.
import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  invalidArgument,
  isTetherError,
  responseTooLarge,
  revisionOutOfRange,
  revisionUnavailable,
  TetherError,
} from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { CompactionItem } from "../domain/conversation.js";
import type { SessionSnapshot } from "../domain/session.js";
import {
  GetSessionResponseSchema,
  ListMessagesResponseSchema,
  type SessionService,
} from "../gen/tether/v1/session_service_pb.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { compactionPartToProto } from "./convert/context.js";
import { decodeRevisionToken, encodeRevisionToken } from "./convert/page-token.js";
import { fromUint64 } from "./convert/scalars.js";
import { messagePage, transcriptMessage } from "./convert/transcript.js";
import { pageSizeOf } from "./page-size.js";
import {
  encodedSize,
  fits,
  fittingCount,
  responseBudget,
  type ResponseBudget,
} from "./response-fit.js";
import type { SessionReads } from "./session-reads.js";
import { scopeOf } from "./tenancy.js";

export type CompactSessionFn = (
  sessionId: SessionId,
  instructions: string | undefined,
) => Promise<{ item: CompactionItem | undefined }>;

export interface SessionHistoryOptions {
  store: RuntimeStore;
  /** CompactSession's work (the runtime's); without it CompactSession is refused. */
  compact?: CompactSessionFn | undefined;
  /** The largest answer the transport writes (TETHER_MAX_MESSAGE_BYTES). */
  maxResponseBytes: number;
}

type HistoryRpcs = Pick<
  ServiceImpl<typeof SessionService>,
  "getSession" | "listMessages" | "forkSession" | "rewindSession" | "compactSession"
>;

/** The transcript at a revision GetSession was asked for (`at_revision`). */
async function transcriptAt(
  store: Pick<RuntimeStore, "readRevision">,
  snapshot: SessionSnapshot,
  revision: number,
): Promise<string[]> {
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

export function createSessionHistoryRpcs(
  options: SessionHistoryOptions,
  reads: SessionReads,
): HistoryRpcs {
  const { store, maxResponseBytes } = options;
  const { load, view, answer } = reads;
  return {
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
        : await transcriptAt(store, snapshot, at === 0 ? snapshot.headRevision : at);
      const got = {
        session: await view(scope, snapshot),
        messages,
        transcript: messages.map(transcriptMessage),
      };
      // A transcript can outgrow one answer (inline images travel in full in `messages`):
      // refused naming the field, pointing at the RPC that pages, never a transport failure.
      if (req.includeMessages) {
        const budget = responseBudget(ctx, maxResponseBytes);
        const size = encodedSize(GetSessionResponseSchema, got, budget.json);
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
      return got;
    },

    async listMessages(req, ctx) {
      const scope = scopeOf(ctx.values);
      const limit = pageSizeOf("ListMessages", req.pageSize);
      const filter = fromUint64(req.afterRevision, "after_revision");
      const fromToken = decodeRevisionToken(req.pageToken);
      if (fromToken !== undefined && filter !== 0) {
        throw invalidArgument("page_token", "cannot be combined with after_revision");
      }
      const snapshot = await load(scope, scope.toStore(req.sessionId, "session_id"));
      const page = messagePage(snapshot.messages, fromToken ?? filter, limit);
      return fitMessagePage(page, responseBudget(ctx, maxResponseBytes));
    },

    async forkSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const sourceId = scope.toStore(req.sessionId, "session_id");
      const targetId = scope.toStore(req.newSessionId || randomUUID(), "new_session_id");
      let at = fromUint64(req.atRevision, "at_revision");
      if (at === 0) at = (await load(scope, sourceId)).headRevision;
      await store.forkSession({ sourceId, targetId, atRevision: at });
      return answer(scope, targetId);
    },

    async rewindSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId, "session_id");
      const toRevision = fromUint64(req.toRevision, "to_revision");
      if (toRevision === 0) throw invalidArgument("to_revision", "must be a revision (1 or more)");
      let expected = fromUint64(req.expectedHeadRevision, "expected_head_revision");
      if (expected === 0) expected = (await load(scope, storeId)).headRevision;
      await store.rewindSession({ sessionId: storeId, toRevision, expectedHeadRevision: expected });
      return answer(scope, storeId);
    },

    async compactSession(req, ctx) {
      const scope = scopeOf(ctx.values);
      const storeId = scope.toStore(req.sessionId, "session_id");
      await load(scope, storeId);
      if (!options.compact)
        throw new TetherError("internal", "this server cannot compact sessions");
      const { item } = await options.compact(storeId, req.instructions);
      return {
        ...(await answer(scope, storeId)),
        compacted: item !== undefined,
        ...(item && { compaction: compactionPartToProto(item) }),
      };
    },
  };
}
