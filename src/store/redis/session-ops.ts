// Session maintenance of the Redis store: delete, list (from the index hint) and vacuum.
import type { SessionId } from "../../domain/ids.js";
import type { SessionListPage, VacuumReport } from "../../domain/session.js";
import { int } from "./codec.js";
import type { RedisContext } from "./context.js";
import { toStoreError } from "./scripts.js";

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
