// A session's history on Redis: reading any revision it holds, rewinding and forking (the Lua
// side is in _history.lua and the three scripts). A fork is two scripts, one per session: the
// source's revision is read, then the target is created from it (ADR 0010).
import {
  headRevisionConflict,
  revisionOutOfRange,
  revisionUnavailable,
  sessionAlreadyExists,
  sessionNotFound,
  turnInProgress,
} from "../../domain/errors.js";
import type { ForkDraft, HistoryReceipt, RevisionRead, RewindDraft } from "../../domain/history.js";
import type { SessionId } from "../../domain/ids.js";
import { int, str } from "./codec.js";
import type { RedisContext } from "./context.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

/** The refusals readRevision and rewindSession share; `field` names the revision asked for. */
function refuse(sessionId: SessionId, reply: ScriptReply, field: string, revision: number): never {
  switch (reply[0]) {
    case REPLY.NONE:
      throw sessionNotFound(sessionId);
    case REPLY.OUT_OF_RANGE:
      throw revisionOutOfRange(sessionId, field, revision, int(reply, 1));
    case REPLY.NOT_KEPT:
      throw revisionUnavailable(sessionId, field, revision, int(reply, 1));
    default:
      throw new Error(`unexpected reply ${String(reply[0])} from the store's history`);
  }
}

export async function readRevision(
  ctx: RedisContext,
  sessionId: SessionId,
  revision: number,
  field = "revision",
): Promise<RevisionRead> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "readRevision",
    [k.head, k.messages, k.metadata, k.history, k.rewinds, k.archive, k.metadataLog],
    [revision],
  );
  if (reply[0] !== REPLY.OK) refuse(sessionId, reply, field, revision);
  const count = int(reply, 3);
  const messages: string[] = [];
  for (let i = 0; i < count; i++) messages.push(str(reply, 4 + i));
  const metadata: Record<string, string> = {};
  for (let i = 4 + count; i + 1 < reply.length; i += 2) {
    metadata[str(reply, i)] = str(reply, i + 1);
  }
  return {
    sessionId,
    revision,
    headRevision: int(reply, 1),
    turnIndex: int(reply, 2),
    messages,
    metadata,
  };
}

export async function rewindSession(
  ctx: RedisContext,
  draft: RewindDraft,
): Promise<HistoryReceipt> {
  const { sessionId, toRevision } = draft;
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "rewindSession",
    [
      k.head,
      k.messages,
      k.metadata,
      k.history,
      k.rewinds,
      k.archive,
      k.metadataLog,
      k.lease,
      k.parked,
    ],
    [toRevision, draft.expectedHeadRevision],
  );
  switch (reply[0]) {
    case REPLY.OK:
      return { sessionId, headRevision: int(reply, 1) };
    case REPLY.HEAD_CONFLICT:
      throw headRevisionConflict(sessionId, draft.expectedHeadRevision, int(reply, 1));
    case REPLY.BUSY:
      throw turnInProgress(sessionId, str(reply, 1) === "parked" ? "parked" : "running");
    default:
      return refuse(sessionId, reply, "to_revision", toRevision);
  }
}

/** `readFrom` reads the source (its own lane on a store with several connections). */
export async function forkSession(
  ctx: RedisContext,
  readFrom: RedisContext,
  draft: ForkDraft,
): Promise<HistoryReceipt> {
  const source = await readRevision(readFrom, draft.sourceId, draft.atRevision, "at_revision");
  const k = ctx.keys(draft.targetId);
  const reply = await ctx.scripts.run(
    "forkSession",
    [k.head, k.messages, k.metadata, k.history, k.metadataLog, k.workIndex, k.inputIndex],
    [
      draft.atRevision,
      source.turnIndex,
      JSON.stringify(Object.entries(source.metadata).flat()),
      ...source.messages,
    ],
  );
  if (reply[0] === REPLY.EXISTS) throw sessionAlreadyExists(draft.targetId);
  ctx.noteSession(draft.targetId);
  return { sessionId: draft.targetId, headRevision: int(reply, 1) };
}
