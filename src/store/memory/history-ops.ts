// A session's history in the memory store (as redis/history-ops.ts): every revision stays
// readable, a rewind commits an earlier revision's transcript, a fork starts a new session.
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
import { atomically, type MemoryContext } from "./context.js";
import { liveLease, type SessionCell } from "./session-cell.js";

/** Appends the new head's point (after a commit, a rewind or a fork). */
export function recordRevision(cell: SessionCell): void {
  const h = cell.history;
  // Revision 1 of a session its first input created: nothing committed yet.
  if (h.points.length === 0 && cell.headRevision === 2 && h.from === 1) {
    h.points.push({ count: 0, turnIndex: 0 });
  }
  h.points.push({ count: cell.messages.length, turnIndex: cell.turnIndex });
}

function pointOf(cell: SessionCell, revision: number) {
  const h = cell.history;
  const point = h.points[revision - h.from];
  if (point) return point;
  if (revision === 1 && h.points.length === 0) return { count: 0, turnIndex: 0 };
  return undefined;
}

/** The transcript as it was at `revision`: back over every rewind after it (newest first). */
function transcriptAt(cell: SessionCell, revision: number, count: number): string[] {
  let list: readonly string[] = cell.messages;
  for (const rewind of [...cell.history.rewinds].reverse()) {
    if (rewind.revision <= revision) break;
    list = [...list.slice(0, rewind.kept), ...rewind.dropped];
  }
  return list.slice(0, count);
}

function metadataAt(cell: SessionCell, revision: number): Record<string, string> {
  if (revision === cell.headRevision) return { ...cell.metadata };
  const metadata: Record<string, string> = {};
  for (const entry of cell.history.metadataLog) {
    if (entry.revision > revision) break;
    for (const [key, value] of Object.entries(entry.patch)) {
      if (value === "") delete metadata[key];
      else metadata[key] = value;
    }
  }
  return metadata;
}

function read(cell: SessionCell, revision: number, field: string): RevisionRead {
  if (cell.headRevision === 0) throw sessionNotFound(cell.sessionId);
  if (revision > cell.headRevision) {
    throw revisionOutOfRange(cell.sessionId, field, revision, cell.headRevision);
  }
  const point = pointOf(cell, revision);
  if (!point) throw revisionUnavailable(cell.sessionId, field, revision, cell.history.from);
  return {
    sessionId: cell.sessionId,
    revision,
    headRevision: cell.headRevision,
    turnIndex: point.turnIndex,
    messages: transcriptAt(cell, revision, point.count),
    metadata: metadataAt(cell, revision),
  };
}

export function readRevision(
  ctx: MemoryContext,
  sessionId: SessionId,
  revision: number,
): Promise<RevisionRead> {
  return atomically(ctx, sessionId, (cell) => read(cell, revision, "revision"));
}

export function rewindSession(ctx: MemoryContext, draft: RewindDraft): Promise<HistoryReceipt> {
  return atomically(ctx, draft.sessionId, (cell, nowMs) => {
    if (cell.headRevision === 0) throw sessionNotFound(cell.sessionId);
    if (cell.headRevision !== draft.expectedHeadRevision) {
      throw headRevisionConflict(cell.sessionId, draft.expectedHeadRevision, cell.headRevision);
    }
    const target = read(cell, draft.toRevision, "to_revision").messages;
    if (liveLease(cell, nowMs)) throw turnInProgress(cell.sessionId, "running");
    if (cell.parked) throw turnInProgress(cell.sessionId, "parked");
    // What the live transcript and the target share stays; the rest of it is kept aside.
    let kept = 0;
    while (
      kept < target.length &&
      kept < cell.messages.length &&
      target[kept] === cell.messages[kept]
    ) {
      kept++;
    }
    cell.headRevision += 1;
    cell.history.rewinds.push({
      revision: cell.headRevision,
      kept,
      dropped: cell.messages.slice(kept),
    });
    cell.messages = [...target];
    cell.transcriptEpoch = `${cell.transcriptEpoch.split(".")[0] ?? ""}.${cell.headRevision}`;
    recordRevision(cell);
    return {
      sessionId: cell.sessionId,
      headRevision: cell.headRevision,
    };
  });
}

export async function forkSession(ctx: MemoryContext, draft: ForkDraft): Promise<HistoryReceipt> {
  const source = await atomically(ctx, draft.sourceId, (cell) =>
    read(cell, draft.atRevision, "at_revision"),
  );
  return atomically(ctx, draft.targetId, (cell) => {
    if (cell.headRevision > 0 || cell.batches.size > 0 || cell.inputs.size > 0) {
      throw sessionAlreadyExists(draft.targetId);
    }
    cell.headRevision = draft.atRevision;
    cell.turnIndex = source.turnIndex;
    cell.messages = [...source.messages];
    cell.metadata = { ...source.metadata };
    cell.history = {
      from: draft.atRevision,
      points: [],
      rewinds: [],
      metadataLog: [{ revision: draft.atRevision, patch: { ...source.metadata } }],
    };
    recordRevision(cell);
    return {
      sessionId: draft.targetId,
      headRevision: cell.headRevision,
    };
  });
}
