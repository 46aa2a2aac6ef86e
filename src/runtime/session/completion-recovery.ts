// A turn's commit and its turn_completed event are two writes: a replica that dies (or stalls past
// its lease, or loses Redis) between them leaves a committed turn that no client ever sees end.
// Every new lease holder therefore looks at the log's last turn before running anything: if that
// turn started but never completed, and the committed turn index shows it landed, the holder
// announces the completion itself, reading the outcome back from the committed transcript.
import type { Message } from "../../domain/conversation.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { SessionEvent } from "../../domain/session-events.js";
import type { SessionSnapshot } from "../../domain/session.js";
import type { TurnOutcome } from "../../domain/turn-outcome.js";
import { ZERO_USAGE } from "../../domain/usage.js";
import type { LogEntry } from "../../ports/event-log.js";
import { entryCursor } from "../stream/index.js";
import type { RuntimeDeps } from "../deps.js";
import { decodeMessage } from "../turn/index.js";

const PAGE = 64;
/** How far back the last turn boundary is looked for; a turn longer than this is not repaired. */
const MAX_PAGES = 64;

const isBoundary = (entry: LogEntry): boolean =>
  entry.event.type === "turn_started" || entry.event.type === "turn_completed";

/** The log's last turn_started or turn_completed, scanning back from the end. */
async function lastTurnBoundary(
  deps: RuntimeDeps,
  fence: LeaseFence,
): Promise<LogEntry | undefined> {
  // Usually within the last page: one read from the end; a longer turn pages back below.
  const last = await deps.log.tail(fence.sessionId, PAGE);
  const found = last.findLast(isBoundary);
  if (found || last.length < PAGE) return found;
  let end = last[0]?.seq ?? 0;
  for (let page = 0; page < MAX_PAGES && end > 0; page++) {
    const from = Math.max(0, end - PAGE);
    const read = await deps.log.read(fence.sessionId, from, end - from);
    const entries = read.entries.filter((e) => e.seq <= end);
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i] as LogEntry;
      if (isBoundary(entry)) return entry;
    }
    if (read.firstRetainedSeq > from) return undefined;
    end = from;
  }
  return undefined;
}

/** What the transcript says about how the turn ended; the exact outcome was not recorded. */
function outcomeFromTranscript(snapshot: SessionSnapshot): TurnOutcome {
  const last = snapshot.messages.at(-1);
  const message: Message | undefined = last === undefined ? undefined : decodeMessage(last);
  if (message?.role === "assistant" && !message.parts.some((p) => p.type === "tool_call")) {
    const text = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n");
    return { kind: "finished", reason: "assistant_message", text };
  }
  return {
    kind: "failed",
    reason: "internal",
    message:
      "the turn committed, but its replica stopped before announcing the outcome; the committed session state holds the result",
  };
}

/**
 * Announces the completion of a committed but unannounced turn under `fence`. Returns the turn id
 * it announced, if any. The append is fenced, so of two holders racing here only the live one
 * writes.
 */
export async function announceCommittedTurn(
  deps: RuntimeDeps,
  fence: LeaseFence,
): Promise<string | undefined> {
  const boundary = await lastTurnBoundary(deps, fence);
  if (boundary?.event.type !== "turn_started") return undefined;
  const snapshot = await deps.store.loadSession(fence.sessionId);
  const started = boundary.event.turnIndex;
  if (!snapshot || snapshot.turnIndex < started) return undefined; // not committed: it re-runs
  if (snapshot.turnIndex > started) {
    // Turns committed that the log never started: not written by this runtime; leave it alone.
    deps.logger.warn(
      {
        sessionId: fence.sessionId,
        turnId: boundary.turnId,
        started,
        turnIndex: snapshot.turnIndex,
      },
      "unannounced turn not recovered: the turn index moved past it",
    );
    return undefined;
  }
  const event: SessionEvent = {
    type: "turn_completed",
    outcome: outcomeFromTranscript(snapshot),
    headRevision: snapshot.headRevision,
    usage: ZERO_USAGE,
    fencingToken: fence.fencingToken,
    recovered: true,
  };
  const [seq] = await deps.log.append(fence.sessionId, [{ turnId: boundary.turnId, event }], fence);
  if (seq !== undefined) {
    deps.bus.publish({
      cursor: entryCursor(seq),
      sessionId: fence.sessionId,
      turnId: boundary.turnId,
      event,
    });
  }
  deps.logger.info(
    {
      sessionId: fence.sessionId,
      turnId: boundary.turnId,
      headRevision: snapshot.headRevision,
      fencingToken: fence.fencingToken,
    },
    "turn completion announced by a successor",
  );
  return boundary.turnId;
}
