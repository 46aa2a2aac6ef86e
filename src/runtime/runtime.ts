// The runtime's surface for the API: submit input and follow the turn that consumes it, watch a
// session, deliver client tool results, cancel. Any replica serves any call; the replica that
// wins the session's lease executes it.
import { setMaxListeners } from "node:events";
import { sessionNotFound } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { CursoredEvent } from "../domain/session-events.js";
import type { RuntimeDeps } from "./deps.js";
import { createSessionDriver, replicaClosing, type SessionDriver } from "./session/index.js";
import { watchSession } from "./stream/index.js";
import { streamTurn, type StreamTurnCommand } from "./stream-turn.js";
import { currentTurn, submitTurn, type SubmittedTurnInput } from "./submit-turn.js";
import { createToolAnswers, type ToolAnswers } from "./tool-answers.js";
import { compactNow, decodeCommitted, type CompactNowReceipt } from "./turn/index.js";

export type { BusyStrategy, StreamTurnCommand } from "./stream-turn.js";
export type { SubmittedTurnInput } from "./submit-turn.js";

/** Tool answers (results and approval decisions) are tool-answers.ts's, as the API sees them. */
export interface TetherRuntime extends Pick<ToolAnswers, "submitToolResults" | "decideToolCalls"> {
  /** Events of the turn that consumes the input, ending with its turn_completed. */
  streamTurn(command: StreamTurnCommand, signal: AbortSignal): AsyncIterable<CursoredEvent>;
  /**
   * Stores the input as StreamTurn does and offers to drive the session, without following the
   * turn; a steered retry under its key finds what its first attempt stored in another state.
   */
  submitTurn(command: StreamTurnCommand): Promise<SubmittedTurnInput>;
  /** The turn that takes answers now (parked, else running anywhere), if any. */
  currentTurn(sessionId: SessionId): Promise<string | undefined>;
  watch(
    sessionId: SessionId,
    publicSessionId: string,
    afterCursor: number,
    untilTurnCompleted: boolean,
    signal: AbortSignal,
  ): AsyncIterable<CursoredEvent>;
  /** Cancels the running turn, or the parked one (which then ends on whichever replica). */
  cancelTurn(sessionId: SessionId, turnId?: string): Promise<boolean>;
  /** The messages a turn committed, as stored, read at the revision its commit made. */
  committedMessages(sessionId: SessionId, turnId: string, revision: number): Promise<string[]>;
  /** CompactSession: compaction now, as its own commit (turn/compact-now.ts). */
  compactSession(
    sessionId: SessionId,
    instructions: string | undefined,
  ): Promise<CompactNowReceipt>;
  /**
   * Refuses new turns and ends WatchSession streams at once; lets running turns finish (up to
   * the timeout), handing over the ones that wait for a client; releases every lease; then ends
   * the StreamTurn streams still open. Streams end with UNAVAILABLE: resume on another replica.
   */
  drain(timeoutMs: number): Promise<DrainReport>;
  readonly driver: SessionDriver;
}

export interface DrainReport {
  /** Every session loop ended and released its lease: the clean exit of ADR 0302. */
  released: boolean;
}

export function createTetherRuntime(deps: RuntimeDeps): TetherRuntime {
  const driver = createSessionDriver(deps);
  let closing = false;
  const answers = createToolAnswers(deps, driver);
  // Aborted when the drain starts: watches end once they delivered what they had.
  const watchStop = new AbortController();
  // Aborted when the drain has released every lease: turn streams still open end then.
  const turnStreamStop = new AbortController();
  // Every open stream listens on these two: thousands of listeners are expected, not a leak.
  setMaxListeners(0, watchStop.signal, turnStreamStop.signal);

  /** Every call that names a session without delivering input to it needs it to exist. */
  async function requireSession(sessionId: SessionId): Promise<void> {
    if (!(await deps.store.loadSession(sessionId))) throw sessionNotFound(sessionId);
  }

  async function* watch(
    sessionId: SessionId,
    publicSessionId: string,
    afterCursor: number,
    untilTurnCompleted: boolean,
    signal: AbortSignal,
  ): AsyncGenerator<CursoredEvent, void, undefined> {
    // Answered at once, before any wait: an unknown session has no events to wait for.
    await requireSession(sessionId);
    if (closing) throw replicaClosing("stream");
    for await (const item of watchSession(deps, {
      sessionId,
      publicSessionId,
      afterCursor,
      signal,
      stop: watchStop.signal,
      drivenHere: driver,
    })) {
      yield item;
      if (untilTurnCompleted && item.event.type === "turn_completed") return;
    }
    if (watchStop.signal.aborted && !signal.aborted) throw replicaClosing("stream");
  }

  return {
    streamTurn: (command, signal) =>
      streamTurn(
        { deps, driver, closing: () => closing, stop: turnStreamStop.signal },
        command,
        signal,
      ),
    submitTurn: (command) =>
      submitTurn({ deps, driver, closing: () => closing, stop: turnStreamStop.signal }, command),
    currentTurn: (sessionId) => currentTurn(deps, sessionId),
    watch,
    submitToolResults: answers.submitToolResults,
    decideToolCalls: answers.decideToolCalls,
    async cancelTurn(sessionId, turnId) {
      await requireSession(sessionId);
      if (await deps.store.cancelParkedTurn(sessionId, turnId)) {
        await answers.wakeParked(sessionId);
        return true;
      }
      return deps.signals.requestCancel(sessionId, turnId);
    },
    compactSession: (sessionId, instructions) => compactNow(deps, sessionId, instructions),
    async committedMessages(sessionId, turnId, revision) {
      const { messages } = await deps.store.readRevision(sessionId, revision);
      return messages.filter((m) => decodeCommitted(m).mark.turnId === turnId);
    },
    async drain(timeoutMs) {
      closing = true;
      watchStop.abort();
      try {
        return await driver.close(timeoutMs);
      } finally {
        turnStreamStop.abort();
      }
    },
    driver,
  };
}
