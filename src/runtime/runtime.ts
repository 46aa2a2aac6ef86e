// The runtime's surface for the API: submit input and follow the turn that consumes it, watch a
// session, deliver client tool results, cancel. Any replica serves any call; the replica that
// wins the session's lease executes it.
import { compactNow, type CompactNowReceipt } from "./turn/index.js";
import { setMaxListeners } from "node:events";
import { invalidArgument, sessionNotFound, TetherError } from "../domain/errors.js";
import type { InputItem } from "../domain/conversation.js";
import type { SessionId } from "../domain/ids.js";
import type { CursoredEvent } from "../domain/session-events.js";
import type { ApprovalDecision, ClientToolResult, ToolAnswerReport } from "../domain/tool-calls.js";
import { createSessionIfAbsent } from "../ports/session-creation.js";
import type { ToolDefinition } from "../ports/tool-executor.js";
import { entryCursor } from "./stream/index.js";
import type { RuntimeDeps } from "./deps.js";
import { encodeInputPayload, type TurnSettings } from "./turn/index.js";
import { decodeCommitted, submittingTrace } from "./turn/index.js";
import {
  agentBindingPatch,
  isBoundTo,
  requireAnswerableTurn,
  type AgentPin,
} from "./turn/index.js";
import {
  createSessionDriver,
  startsInOneStep,
  submitOrStart,
  type SessionDriver,
  type Submitted,
} from "./session/index.js";
import { watchSession, type Latch } from "./stream/index.js";
import { followTurn, openTurnWatch } from "./turn-watch.js";
import { sessionBusy, sessionParked, shuttingDown } from "./session/index.js";

export type BusyStrategy = "enqueue" | "steer" | "reject" | "interrupt";

export interface StreamTurnCommand {
  sessionId: SessionId;
  publicSessionId: string;
  items: InputItem[];
  clientRequestId?: string;
  busyStrategy: BusyStrategy;
  clientTools: ToolDefinition[];
  settings: TurnSettings;
  /** Binds a session this input creates to the agent (`agentId` the store id). */
  agent?: AgentPin;
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
   * replica) and wakes the turn; turn_not_running when the turn has completed or waits for no
   * client call.
   */
  submitToolResults(
    sessionId: SessionId,
    turnId: string,
    results: ClientToolResult[],
  ): Promise<ToolAnswerReport>;
  /**
   * Approval decisions for calls that wait for one (first decision wins, like results). A turn
   * that has completed or has no waits is turn_not_running; else a call whose tool needs no
   * approval is invalid_argument.
   */
  decideToolCalls(
    sessionId: SessionId,
    turnId: string,
    decisions: ApprovalDecision[],
  ): Promise<ToolAnswerReport>;
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
  let draining = false;
  // Aborted when the drain starts: watches end once they delivered what they had.
  const watchStop = new AbortController();
  // Aborted when the drain has released every lease: turn streams still open end then.
  const turnStreamStop = new AbortController();
  // Every open stream listens on these two: thousands of listeners are expected, not a leak.
  setMaxListeners(0, watchStop.signal, turnStreamStop.signal);

  async function* streamTurn(
    command: StreamTurnCommand,
    signal: AbortSignal,
  ): AsyncGenerator<CursoredEvent, void, undefined> {
    refuseToStart(command);
    const { sessionId } = command;
    if (command.agent) await bindOnFirstUse(sessionId, command.publicSessionId, command.agent);
    const watch = openTurnWatch(deps, driver, {
      sessionId,
      publicSessionId: command.publicSessionId,
      signal,
      stop: turnStreamStop.signal,
    });
    let kick: NodeJS.Timeout | undefined;
    try {
      const submitted = await submitTurnInput(command, watch.startsAt);
      try {
        const offer = submitted.started
          ? driver.driveStarted(sessionId, submitted.started)
          : driver.ensureDriven(sessionId);
        await Promise.all([offer, submitted.marked]);
      } finally {
        watch.offered.settle();
      }
      if (submitted.queued) yield submitted.queued;
      // While this client waits, keep offering to drive: if the holder dies, its lease expires
      // (or it is provably dead) and this replica takes the session over.
      kick = setInterval(
        () => void driver.ensureDriven(sessionId).catch(() => undefined),
        Math.max(50, Math.floor(deps.leaseTtlMs / 2)),
      );
      yield* followTurn(watch.events, submitted.inputId);
      if (turnStreamStop.signal.aborted && !signal.aborted) throw shuttingDown();
    } finally {
      clearInterval(kick);
      watch.close();
    }
  }

  /** A turn is refused before anything is stored while draining, or with a clashing tool name. */
  function refuseToStart(command: StreamTurnCommand): void {
    if (draining) throw new TetherError("store_unavailable", "the server is shutting down");
    command.clientTools.forEach((tool, i) => {
      const server = deps.selectableTools?.serverOf(tool.name);
      if (server !== undefined) {
        throw invalidArgument(
          `client_tools[${i}].name`,
          `${tool.name} would be a tool of the tool server ${server}; name the client tool otherwise`,
        );
      }
    });
  }

  /**
   * Stores the input as the busy strategy says, and tells the watch where the stream starts.
   * Returns the input's id and, for input that waits for a running turn, its input_queued.
   */
  async function submitTurnInput(
    command: StreamTurnCommand,
    startsAt: Latch<{ cursor: number; readLog: boolean }>,
  ): Promise<
    { inputId: string; queued: CursoredEvent | undefined } & Omit<Submitted, "submitted">
  > {
    const { sessionId } = command;
    // A parked turn holds the session without a lease: the input waits for it (idle claims
    // find nothing while it is parked), or steers, interrupts or is refused as for a running
    // turn. Where the log ends is read with them (one round trip): the stream follows from
    // there. Enqueued input (the default) needs neither look: the submit says if it waits. A
    // turn start says where the log ends in its own step (ADR 0023).
    const looks = command.busyStrategy !== "enqueue";
    const start = startsInOneStep(deps, driver.isDriving(sessionId), command.busyStrategy);
    const [current, parked, readSeq] = await Promise.all([
      looks ? deps.store.currentLease(sessionId) : undefined,
      looks ? deps.store.readParkedTurn(sessionId) : undefined,
      start ? undefined : deps.log.lastSeq(sessionId),
    ]);
    if (current && command.busyStrategy === "reject")
      throw sessionBusy(command.publicSessionId, current);
    if (parked && command.busyStrategy === "reject") {
      throw sessionParked(command.publicSessionId, parked.turnId);
    }
    const delivery = await deliveryOf(command, current !== undefined, parked?.turnId);
    const draft = {
      sessionId,
      delivery,
      ...(command.clientRequestId ? { sourceKey: command.clientRequestId } : {}),
      payload: encodeInputPayload({
        items: command.items,
        clientTools: command.clientTools,
        settings: command.settings,
        ...submittingTrace(deps),
      }),
    };
    // The ready mark follows the stored input (ADR 0026); it is awaited with the offer to drive.
    const { submitted: receipt, started, logEnd, marked } = await submitOrStart(deps, start, draft);
    // Not said by the start (a memory store without its log): no loop runs the session yet.
    const startSeq = readSeq ?? logEnd ?? (await deps.log.lastSeq(sessionId));
    const inputId = receipt.input.inputId;
    // A retried request follows its original input, which may already be in the log.
    startsAt.settle(
      receipt.deduplicated
        ? { cursor: 0, readLog: true }
        : { cursor: entryCursor(startSeq), readLog: false },
    );
    if (current && command.busyStrategy === "interrupt")
      await deps.signals.requestCancel(sessionId);
    if (parked && command.busyStrategy === "interrupt")
      await deps.store.cancelParkedTurn(sessionId, parked.turnId);
    const queued: CursoredEvent | undefined =
      receipt.sessionBusy && !receipt.deduplicated
        ? {
            cursor: entryCursor(startSeq),
            sessionId: command.publicSessionId,
            turnId: "",
            event: { type: "input_queued", inputId },
          }
        : undefined;
    return { inputId, queued, ...(marked && { marked }), ...(started && { started }) };
  }

  /** Steered input joins the running (or parked) turn; any other waits for the next turn. */
  async function deliveryOf(
    command: StreamTurnCommand,
    leased: boolean,
    parkedTurnId: string | undefined,
  ): Promise<
    { kind: "next_turn" } | { kind: "active_turn"; turnId: string; minBoundary: "after_work" }
  > {
    if (command.busyStrategy !== "steer") return { kind: "next_turn" };
    // Admitted at the first checkpoint after the turn resumes.
    if (parkedTurnId !== undefined) {
      return { kind: "active_turn", turnId: parkedTurnId, minBoundary: "after_work" };
    }
    const running = leased ? await deps.signals.activeTurn(command.sessionId) : undefined;
    return running
      ? { kind: "active_turn", turnId: running, minBoundary: "after_work" }
      : { kind: "next_turn" };
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
      drivenHere: driver,
    })) {
      yield item;
      if (untilTurnCompleted && item.event.type === "turn_completed") return;
    }
    if (watchStop.signal.aborted && !signal.aborted) throw shuttingDown();
  }

  /**
   * StreamTurn naming an agent: a session its input creates is created bound to the agent (as
   * CreateSession would); one already bound to that agent is left as it is; any other is refused
   * (UpdateSession moves a pin).
   */
  async function bindOnFirstUse(
    sessionId: SessionId,
    publicSessionId: string,
    agent: AgentPin,
  ): Promise<void> {
    let snapshot = await deps.store.loadSession(sessionId);
    if (!snapshot) {
      const metadataPatch = await agentBindingPatch(deps.store, agent);
      if (await createSessionIfAbsent(deps.store, sessionId, metadataPatch)) return;
      snapshot = await deps.store.loadSession(sessionId);
    }
    if (!isBoundTo(snapshot?.metadata ?? {}, agent.agentId)) {
      throw invalidArgument(
        "agent_id",
        `session ${publicSessionId} exists and is not bound to agent ${agent.clientAgentId}; UpdateSession binds it`,
      );
    }
  }

  /** A parked turn that can go on is driven now, here (or by its holder, if one beat us). */
  async function wakeParked(sessionId: SessionId): Promise<void> {
    await deps.ready.markReady(sessionId);
    await driver.ensureDriven(sessionId).catch(() => undefined);
  }

  /**
   * After the store took answers (results or approval decisions; it decides the first one on any
   * replica): a running turn is woken by the signal of those accepted now (it also reads the
   * store while it waits); a parked one is resumed here once every wait is settled.
   */
  async function afterAnswers(
    sessionId: SessionId,
    turnId: string,
    freshCount: number,
    signal: () => Promise<boolean>,
  ): Promise<void> {
    if (freshCount > 0) await signal().catch(() => false);
    // Also when every answer was ignored: a client retrying after a lost response repairs a
    // wake-up that the first attempt's replica did not get to send.
    if ((await deps.store.readParkedTurn(sessionId))?.turnId === turnId) {
      await wakeParked(sessionId);
    }
  }

  return {
    streamTurn,
    watch,
    async submitToolResults(sessionId, turnId, results) {
      await requireAnswerableTurn(deps.store, sessionId, turnId);
      const report = await deps.store.answerToolCalls(sessionId, turnId, results);
      const fresh = acceptedOnly(results, report);
      await afterAnswers(sessionId, turnId, fresh.length, () =>
        deps.signals.submitToolResults(sessionId, turnId, fresh),
      );
      return report;
    },
    async decideToolCalls(sessionId, turnId, decisions) {
      await requireAnswerableTurn(deps.store, sessionId, turnId);
      const states = await deps.store.readToolCalls(sessionId, turnId);
      const waits = (kind: "result" | "approval", callId: string) =>
        states.some((s) => s.kind === kind && s.callId === callId);
      decisions.forEach((d, i) => {
        if (!waits("approval", d.callId) && waits("result", d.callId)) {
          throw invalidArgument(
            `decisions[${i}].call_id`,
            `call ${d.callId} of turn ${turnId} needs no approval`,
          );
        }
      });
      const report = await deps.store.decideApprovals(sessionId, turnId, decisions);
      const fresh = acceptedOnly(decisions, report);
      await afterAnswers(sessionId, turnId, fresh.length, () =>
        deps.signals.submitDecisions(sessionId, turnId, fresh),
      );
      return report;
    },
    async cancelTurn(sessionId, turnId) {
      await requireSession(sessionId);
      if (await deps.store.cancelParkedTurn(sessionId, turnId)) {
        await wakeParked(sessionId);
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

/** The answers the store accepted now, each once (a duplicate in one request is ignored). */
function acceptedOnly<T extends { callId: string }>(answers: T[], report: ToolAnswerReport): T[] {
  const accepted = new Set(report.accepted);
  return answers.filter((a) => accepted.delete(a.callId));
}
