// Reads of a session's turn records (domain/turn-records.ts); the steps that start, park,
// resume and commit a turn write them (lua/_turns.lua).
import { invalidArgument } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type {
  TurnOutcomeSummary,
  TurnRecord,
  TurnRecordPage,
  TurnRecordQuery,
} from "../../domain/turn-records.js";
import type { RedisContext } from "./context.js";
import { REPLY } from "./replies.js";

/** A record as lua/_turns.lua writes it: the outcome as its own JSON. */
type StoredTurn = Omit<TurnRecord, "outcome"> & { outcomeJson?: string };

function decodeTurn(raw: unknown): TurnRecord {
  const { outcomeJson, ...rest } = JSON.parse(String(raw)) as StoredTurn;
  const record: TurnRecord = { ...rest };
  if (outcomeJson !== undefined) record.outcome = JSON.parse(outcomeJson) as TurnOutcomeSummary;
  return record;
}

export async function readTurns(
  ctx: RedisContext,
  sessionId: SessionId,
  query: TurnRecordQuery,
): Promise<TurnRecordPage> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "readTurns",
    [k.turnRecords, k.turnOrder],
    [query.order, query.after ?? "", query.limit],
  );
  if (reply[0] === REPLY.NONE) {
    throw invalidArgument("after", `names no turn of session ${sessionId}`);
  }
  return { hasMore: reply[1] === 1, turns: reply.slice(2).map(decodeTurn) };
}

export async function readTurn(
  ctx: RedisContext,
  sessionId: SessionId,
  turnId: string,
): Promise<TurnRecord | undefined> {
  const reply = await ctx.scripts.run("readTurn", [ctx.keys(sessionId).turnRecords], [turnId]);
  return reply[0] === REPLY.NONE ? undefined : decodeTurn(reply[1]);
}
