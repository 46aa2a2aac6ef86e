// A session's turn records in memory (domain/turn-records.ts), written inside the steps that
// start, park, resume and commit a turn, as the Redis scripts write them (lua/_turns.lua).
import type { SessionId } from "../../domain/ids.js";
import type { UsageTotals } from "../../domain/session.js";
import {
  TURN_RECORDS_KEPT,
  endStatusOf,
  type TurnEndRecord,
  type TurnRecord,
  type TurnRecordPage,
  type TurnRecordQuery,
} from "../../domain/turn-records.js";
import { pageOfTurns } from "../shared/turn-record-page.js";
import { atomically, type MemoryContext } from "./context.js";
import { copy, type SessionCell } from "./session-cell.js";

type Change =
  | { status: "in_progress" | "waiting" }
  | { status: "ended"; end: TurnEndRecord; usage: UsageTotals | undefined };

/** Creates or updates the turn's record; past the bound, the oldest record goes. */
export function writeTurnRecord(
  cell: SessionCell,
  turnId: string,
  nowMs: number,
  change: Change,
): void {
  let record = cell.turnRecords.get(turnId);
  if (!record) {
    record = { turnId, status: "in_progress", createdAtMs: nowMs };
    cell.turnRecords.set(turnId, record);
    if (cell.turnRecords.size > TURN_RECORDS_KEPT) {
      const oldest = cell.turnRecords.keys().next().value;
      if (oldest !== undefined) cell.turnRecords.delete(oldest);
    }
  }
  record.startedAtMs ??= nowMs;
  if (change.status !== "ended") {
    record.status = change.status;
    return;
  }
  record.status = endStatusOf(change.end.outcome);
  record.completedAtMs = nowMs;
  record.outcome = copy(change.end.outcome);
  if (change.usage) record.usage = { ...change.usage };
}

export function readTurns(
  ctx: MemoryContext,
  sessionId: SessionId,
  query: TurnRecordQuery,
): Promise<TurnRecordPage> {
  return atomically(ctx, sessionId, (cell) =>
    copy(pageOfTurns(sessionId, [...cell.turnRecords.values()], query)),
  );
}

export function readTurn(
  ctx: MemoryContext,
  sessionId: SessionId,
  turnId: string,
): Promise<TurnRecord | undefined> {
  return atomically(ctx, sessionId, (cell) => {
    const record = cell.turnRecords.get(turnId);
    return record && copy(record);
  });
}
