// A streaming create (ADR 0037, "Streaming create"): `POST /v1/agents/sessions` with
// `stream: true` creates the session exactly as a plain create does, then answers the SSE of the
// session's events from its log's first entry, through the events route's own stream
// (session-events-route.ts: the same translator, writer and watch), after one event of its own:
// `agent.session.created`, carrying the object a plain create answers. The stream ends once the
// session is idle again: no turn running or parked, no input waiting to start one. A parked turn
// keeps it open, so the SDK's creation tool handlers answer their calls on it.
import { setTimeout as delay } from "node:timers/promises";
import type { SessionId } from "../domain/ids.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { CURSOR_SCALE } from "../runtime/index.js";
import { eventId } from "./event-ids.js";
import type { Reply } from "./route-table.js";
import { fromLogStart, streamEvents, type SessionEventSource } from "./session-events-route.js";

/** The log has no entry before the session's first: the created event is the place before it. */
const CREATED_EVENT_ID = eventId(0, 0);

/** Between looks at a session the log shows idle whose turn or input has not settled yet. */
const FIRST_LOOK_MS = 20;
const LONGEST_LOOK_MS = 500;

export interface CreateStreamDeps {
  events: SessionEventSource;
  store: Pick<RuntimeStore, "readSessionSummaries" | "listInputs">;
}

/**
 * The streamed answer of a create that stored the session (and its first input) already.
 * `leave` frees the concurrent_streams slot the create took before it stored anything.
 */
export function streamingCreateReply(
  deps: CreateStreamDeps,
  session: { sessionId: SessionId; publicSessionId: string },
  created: Record<string, unknown>,
  leave: (() => void) | undefined,
): Reply {
  const leading = [{ event_id: CREATED_EVENT_ID, type: "agent.session.created", session: created }];
  const plan = {
    ...session,
    ...fromLogStart(session.publicSessionId, leading),
    settled: (cursor: number, closed: AbortSignal) =>
      settledAfter(deps, session.sessionId, cursor, closed),
  };
  return {
    status: 200,
    body: undefined,
    stream: (res, headers) => streamEvents(deps.events, plan, res, headers).finally(leave),
  };
}

/**
 * Whether the session is idle for good once the stream reached `cursor` and the translator shows
 * it idle: true when nothing holds or waits on it; false as soon as the log has an entry past the
 * cursor (the stream follows it). A turn that ended with input waiting keeps the lease into the
 * next turn (the commit releases it only when nothing waits), and an input stored but not claimed
 * yet is listed: both keep the stream open, looked at again until one of the two answers comes.
 */
async function settledAfter(
  deps: CreateStreamDeps,
  sessionId: SessionId,
  cursor: number,
  closed: AbortSignal,
): Promise<boolean> {
  for (let pause = FIRST_LOOK_MS; !closed.aborted; pause = Math.min(2 * pause, LONGEST_LOOK_MS)) {
    const [lastSeq, [summary], inputs] = await Promise.all([
      deps.events.log.lastSeq(sessionId),
      deps.store.readSessionSummaries([sessionId]),
      deps.store.listInputs(sessionId),
    ]);
    if (lastSeq * CURSOR_SCALE > cursor) return false;
    // Deleted meanwhile: nothing more can happen on it.
    if (!summary) return true;
    if (!summary.lease && !summary.parkedTurn && inputs.length === 0) return true;
    await delay(pause, undefined, { signal: closed }).catch(() => undefined);
  }
  return true;
}
