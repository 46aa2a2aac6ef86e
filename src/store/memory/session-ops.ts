// Session maintenance of the memory store: delete, list and vacuum (as redis/session-ops.ts).
import type { SessionId } from "../../domain/ids.js";
import type { SessionListPage, SessionSummary, VacuumReport } from "../../domain/session.js";
import { atomically, type MemoryContext } from "./context.js";
import { copy, liveLease } from "./session-cell.js";

export function deleteSession(ctx: MemoryContext, sessionId: SessionId): Promise<boolean> {
  return atomically(ctx, sessionId, (cell) => {
    const existed = cell.headRevision > 0 || cell.batches.size > 0 || cell.inputs.size > 0;
    ctx.cells.delete(sessionId);
    return existed;
  });
}

export function listSessions(
  ctx: MemoryContext,
  { prefix = "", cursor = "", limit }: { prefix?: string; cursor?: string; limit: number },
): Promise<SessionListPage> {
  const ids = [...ctx.cells.values()]
    .filter((c) => c.headRevision > 0 && c.sessionId.startsWith(prefix) && c.sessionId > cursor)
    .map((c) => c.sessionId)
    .sort();
  const page = ids.slice(0, limit);
  const more = ids.length > limit;
  return Promise.resolve({
    sessionIds: page,
    nextCursor: more ? (page[page.length - 1] ?? "") : "",
  });
}

/** Each cell is read under its own lock, all in one call (the sessions share no state). */
export async function readSessionSummaries(
  ctx: MemoryContext,
  sessionIds: readonly SessionId[],
): Promise<SessionSummary[]> {
  const read = await Promise.all(
    sessionIds.map((sessionId) =>
      atomically(ctx, sessionId, (cell, nowMs): SessionSummary | undefined => {
        if (cell.headRevision === 0) return undefined;
        const lease = liveLease(cell, nowMs);
        return {
          sessionId,
          headRevision: cell.headRevision,
          turnIndex: cell.turnIndex,
          usage: { ...cell.usage },
          ...(cell.costMicros > 0 && { costMicros: cell.costMicros }),
          metadata: { ...cell.metadata },
          lease: lease ? copy(lease) : undefined,
          parkedTurn: cell.parked ? copy(cell.parked) : undefined,
        };
      }),
    ),
  );
  return read.filter((s) => s !== undefined);
}

/** Drops completed and cancelled tombstones from the records and from the source-key index. */
export function vacuum(ctx: MemoryContext, sessionId: SessionId): Promise<VacuumReport> {
  return atomically(ctx, sessionId, (cell) => {
    const report: VacuumReport = { removedBatches: 0, removedInputs: 0 };
    for (const [id, batch] of cell.batches) {
      if (batch.state === "completed" || batch.state === "cancelled") {
        cell.batches.delete(id);
        if (batch.sourceKey) cell.workSourceKeys.delete(batch.sourceKey);
        report.removedBatches++;
      }
    }
    for (const [id, input] of cell.inputs) {
      if (input.state === "completed" || input.state === "cancelled") {
        cell.inputs.delete(id);
        if (input.sourceKey) cell.inputSourceKeys.delete(input.sourceKey);
        report.removedInputs++;
      }
    }
    return copy(report);
  });
}
