// The runtime's surface for the API: submit input and follow the turn that consumes it, watch a
// session, deliver client tool results, cancel. Any replica serves any call; the replica that
// wins the session's lease executes it.
import { sessionNotFound, TetherError } from "../domain/errors.js";
import type { InputItem } from "../domain/conversation.js";
import type { SessionId } from "../domain/ids.js";
import type { SessionExecutionLease } from "../domain/lease.js";
import type { CursoredEvent } from "../domain/session-events.js";
import type { ClientToolResult, ToolAnswerReport } from "../domain/tool-calls.js";
import type { ToolDefinition } from "../ports/tool-executor.js";
import { entryCursor } from "./cursor.js";
import type { RuntimeDeps } from "./deps.js";
import { encodeInputPayload, type TurnSettings } from "./input-payload.js";
import { createSessionDriver, type SessionDriver } from "./session-driver.js";
import { watchSession } from "./session-watch.js";

export type BusyStrategy = "enqueue" | "steer" | "reject" | "interrupt";

export interface StreamTurnCommand {
  sessionId: SessionId;
  publicSessionId: string;
  items: InputItem[];
  clientRequestId?: string;
  busyStrategy: BusyStrategy;
  clientTools: ToolDefinition[];
  settings: TurnSettings;
}

export interface TetherRuntime {
  /** Events of the turn that consumes the input, ending with its turn_completed. */
  streamTurn(command: StreamTurnCommand, signal: AbortSignal): AsyncIterable<CursoredEvent>;
  watch(
    sessionId: SessionId,
    publicSessionId: string,
    afterCursor: number,
    untilTurnCompleted: boolean,
    signal: AbortSignal,
  ): AsyncIterable<CursoredEvent>;
  /**
   * Stores the first answer for each pending call of the turn (the store decides, on any
   * replica) and wakes the turn; turn_not_running when the turn waits for no client call.
   */
  submitToolResults(
    sessionId: SessionId,
    turnId: string,
    results: ClientToolResult[],
  ): Promise<ToolAnswerReport>;
  cancelTurn(sessionId: SessionId, turnId?: string): Promise<boolean>;
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

/** A stream ended by the drain: the client resumes from its last cursor on another replica. */
function shuttingDown(): TetherError {
  return new TetherError(
    "store_unavailable",
    "the server is shutting down: resume from the last cursor on another replica",
  );
}

/** Refusal under the `reject` strategy: names the holder and when its lease expires. */
export function sessionBusy(sessionId: string, holder: SessionExecutionLease): TetherError {
  return new TetherError(
    "session_busy",
    `session ${sessionId} is running a turn on ${holder.owner.ownerId} (lease expires at ${new Date(holder.expiresAtMs).toISOString()})`,
    { fields: { sessionId, holder: holder.owner.ownerId, expiresAtMs: holder.expiresAtMs } },
  );
}

export function createTetherRuntime(deps: RuntimeDeps): TetherRuntime {
  const driver = createSessionDriver(deps);
  let draining = false;
  // Aborted when the drain starts: watches end once they delivered what they had.
  const watchStop = new AbortController();
  // Aborted when the drain has released every lease: turn streams still open end then.
  const turnStreamStop = new AbortController();

  async function* streamTurn(
    command: StreamTurnCommand,
    signal: AbortSignal,
  ): AsyncGenerator<CursoredEvent, void, undefined> {
    if (draining) throw new TetherError("store_unavailable", "the server is shutting down");
    const { sessionId } = command;
    const current = await deps.store.currentLease(sessionId);
    if (current && command.busyStrategy === "reject")
      throw sessionBusy(command.publicSessionId, current);

    let delivery:
      { kind: "next_turn" } | { kind: "active_turn"; turnId: string; minBoundary: "after_work" } = {
      kind: "next_turn",
    };
    if (current && command.busyStrategy === "steer") {
      const running = await deps.signals.activeTurn(sessionId);
      if (running) delivery = { kind: "active_turn", turnId: running, minBoundary: "after_work" };
    }
    const startSeq = await deps.log.lastSeq(sessionId);
    const receipt = await deps.store.submitInput({
      sessionId,
      delivery,
      ...(command.clientRequestId ? { sourceKey: command.clientRequestId } : {}),
      payload: encodeInputPayload({
        items: command.items,
        clientTools: command.clientTools,
        settings: command.settings,
      }),
    });
    const inputId = receipt.input.inputId;
    if (current && command.busyStrategy === "interrupt")
      await deps.signals.requestCancel(sessionId);

    // A retried request follows its original input, which may already be in the log.
    const after = receipt.deduplicated ? 0 : startSeq;
    const events = watchSession(deps, {
      sessionId,
      publicSessionId: command.publicSessionId,
      afterCursor: entryCursor(after),
      signal,
      stop: turnStreamStop.signal,
    });
    await deps.ready.markReady(sessionId);
    await driver.ensureDriven(sessionId);
    // While this client waits, keep offering to drive: if the holder dies, its lease expires
    // (or it is provably dead) and this replica takes the session over.
    const kick = setInterval(
      () => void driver.ensureDriven(sessionId).catch(() => undefined),
      Math.max(50, Math.floor(deps.leaseTtlMs / 2)),
    );
    if (current && !receipt.deduplicated) {
      yield {
        cursor: entryCursor(startSeq),
        sessionId: command.publicSessionId,
        turnId: "",
        event: { type: "input_queued", inputId },
      };
    }

    try {
      let ourTurn: string | undefined;
      for await (const item of events) {
        const { event } = item;
        if (!ourTurn) {
          const mine =
            (event.type === "turn_started" && event.inputIds.includes(inputId)) ||
            (event.type === "input_admitted" && event.inputIds.includes(inputId));
          if (!mine) continue;
          ourTurn = item.turnId;
        }
        if (item.turnId !== ourTurn && event.type !== "gap") continue;
        yield item;
        if (event.type === "turn_completed") return;
      }
      if (turnStreamStop.signal.aborted && !signal.aborted) throw shuttingDown();
    } finally {
      clearInterval(kick);
    }
  }

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
    if (draining) throw shuttingDown();
    for await (const item of watchSession(deps, {
      sessionId,
      publicSessionId,
      afterCursor,
      signal,
      stop: watchStop.signal,
    })) {
      yield item;
      if (untilTurnCompleted && item.event.type === "turn_completed") return;
    }
    if (watchStop.signal.aborted && !signal.aborted) throw shuttingDown();
  }

  return {
    streamTurn,
    watch,
    async submitToolResults(sessionId, turnId, results) {
      await requireSession(sessionId);
      const report = await deps.store.answerToolCalls(sessionId, turnId, results);
      // The signal only wakes the waiting turn sooner; it reads the store if the signal is lost.
      const accepted = new Set(report.accepted);
      const fresh = results.filter((r) => accepted.delete(r.callId));
      if (fresh.length > 0) {
        await deps.signals.submitToolResults(sessionId, turnId, fresh).catch(() => false);
      }
      return report;
    },
    async cancelTurn(sessionId, turnId) {
      await requireSession(sessionId);
      return deps.signals.requestCancel(sessionId, turnId);
    },
    async drain(timeoutMs) {
      draining = true;
      watchStop.abort();
      try {
        return await driver.drain(timeoutMs);
      } finally {
        turnStreamStop.abort();
      }
    },
    driver,
  };
}
