// One page of a session's turn records from all of them in creation order (the memory store's
// read; the Redis store pages inside its script): `after` is exclusive and relative to `order`.
import { invalidArgument } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type { TurnRecord, TurnRecordPage, TurnRecordQuery } from "../../domain/turn-records.js";

export function pageOfTurns(
  sessionId: SessionId,
  oldestFirst: readonly TurnRecord[],
  query: TurnRecordQuery,
): TurnRecordPage {
  const ordered = query.order === "asc" ? oldestFirst : [...oldestFirst].reverse();
  let from = 0;
  if (query.after !== undefined) {
    const at = ordered.findIndex((t) => t.turnId === query.after);
    if (at < 0) throw invalidArgument("after", `names no turn of session ${sessionId}`);
    from = at + 1;
  }
  const turns = ordered.slice(from, from + query.limit);
  return { turns, hasMore: from + query.limit < ordered.length };
}
