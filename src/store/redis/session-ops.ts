// Session maintenance of the Redis store: delete, list (from the index hint) and vacuum.
import type { SessionId } from "../../domain/ids.js";
import type { LeaseOwner } from "../../domain/lease.js";
import type { SessionListPage, SessionSummary, VacuumReport } from "../../domain/session.js";
import { int, str, usageAt } from "./codec.js";
import type { RedisContext } from "./context.js";
import { decodeParked } from "./parked-turn-ops.js";
import { REPLY } from "./replies.js";
import { toStoreError, type ScriptReply } from "./scripts.js";

export async function deleteSession(ctx: RedisContext, sessionId: SessionId): Promise<boolean> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "deleteSession",
    [
      k.head,
      k.messages,
      k.metadata,
      k.stamps,
      k.lease,
      k.sequences,
      k.work,
      k.workPayloads,
      k.workIndex,
      k.workSources,
      k.inputs,
      k.inputPayloads,
      k.inputIndex,
      k.inputSources,
      k.parked,
      k.history,
      k.rewinds,
      k.archive,
      k.metadataLog,
      k.turnRecords,
      k.turnOrder,
    ],
    [],
  );
  try {
    // A pending index update of an earlier commit goes first, so it cannot re-add the session.
    ctx.flushIndex();
    await ctx.redis.zrem(ctx.indexKey, sessionId);
  } catch {
    // The index is a hint; the session's own keys are gone, which is what counts.
  }
  return int(reply, 1) === 1;
}

export async function listSessions(
  ctx: RedisContext,
  options: { prefix?: string; cursor?: string; limit: number },
): Promise<SessionListPage> {
  const prefix = Buffer.from(options.prefix ?? "", "utf8");
  const cursor = Buffer.from(options.cursor ?? "", "utf8");
  // A lexicographic (byte) range of the index: from after the cursor, or from the prefix, to the
  // end of the prefix (0xff sorts after every byte of a UTF-8 id).
  const min =
    cursor.length > 0 && Buffer.compare(cursor, prefix) >= 0
      ? Buffer.concat([Buffer.from("("), cursor])
      : Buffer.concat([Buffer.from("["), prefix]);
  const max =
    prefix.length === 0 ? "+" : Buffer.concat([Buffer.from("["), prefix, Buffer.from([0xff])]);
  let ids: string[];
  try {
    ctx.flushIndex();
    ids = await ctx.redis.zrangebylex(ctx.indexKey, min, max, "LIMIT", 0, options.limit + 1);
  } catch (error) {
    throw toStoreError(error);
  }
  const page = ids.slice(0, options.limit) as SessionId[];
  const more = ids.length > options.limit;
  return { sessionIds: page, nextCursor: more ? (page[page.length - 1] ?? "") : "" };
}

/**
 * One script per session (a script reads one slot), all sent before any reply is awaited: ioredis
 * writes them back to back on each connection (on a cluster, to each node at once), so a page
 * waits about one round trip however many sessions it holds.
 */
export async function readSessionSummaries(
  on: (sessionId: SessionId) => RedisContext,
  sessionIds: readonly SessionId[],
): Promise<SessionSummary[]> {
  const replies = await Promise.all(
    sessionIds.map((sessionId) => {
      const ctx = on(sessionId);
      const k = ctx.keys(sessionId);
      return ctx.scripts.run("readSessionSummary", [k.head, k.metadata, k.lease, k.parked], []);
    }),
  );
  const summaries: SessionSummary[] = [];
  replies.forEach((reply, i) => {
    const sessionId = sessionIds[i];
    if (sessionId !== undefined && reply[0] === REPLY.OK) {
      summaries.push(decodeSummary(sessionId, reply));
    }
  });
  return summaries;
}

/** See readSessionSummary-4.lua for the layout. */
function decodeSummary(sessionId: SessionId, reply: ScriptReply): SessionSummary {
  const leaseToken = str(reply, 8);
  const cost = int(reply, 12);
  const metaCount = int(reply, 13);
  const metadata: Record<string, string> = {};
  for (let i = 14; i + 1 < 14 + metaCount; i += 2) metadata[str(reply, i)] = str(reply, i + 1);
  const parkedFrom = 14 + metaCount;
  return {
    sessionId,
    headRevision: int(reply, 1),
    turnIndex: int(reply, 2),
    usage: usageAt(reply, 3),
    ...(cost > 0 && { costMicros: cost }),
    metadata,
    lease:
      leaseToken === ""
        ? undefined
        : {
            sessionId,
            owner: JSON.parse(str(reply, 11)) as LeaseOwner,
            leaseToken,
            fencingToken: int(reply, 9),
            expiresAtMs: int(reply, 10),
          },
    parkedTurn:
      reply.length > parkedFrom
        ? decodeParked(sessionId, reply, parkedFrom, reply.length - parkedFrom)
        : undefined,
  };
}

export async function vacuum(ctx: RedisContext, sessionId: SessionId): Promise<VacuumReport> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "vacuum",
    [
      k.work,
      k.workPayloads,
      k.workSources,
      k.inputs,
      k.inputPayloads,
      k.inputIndex,
      k.inputSources,
    ],
    [],
  );
  return { removedBatches: int(reply, 1), removedInputs: int(reply, 2) };
}
