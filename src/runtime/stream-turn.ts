// StreamTurn: refuse or store the input as its busy strategy says, offer to drive the session,
// and follow the turn that takes the input until its turn_completed (turn-watch.ts). A session
// the input creates under an agent is bound to it on first use.
import { invalidArgument } from "../domain/errors.js";
import type { InputItem } from "../domain/conversation.js";
import type { SessionId } from "../domain/ids.js";
import type { CursoredEvent } from "../domain/session-events.js";
import type { TurnSettings } from "../domain/turn-settings.js";
import type { ToolDefinition } from "../ports/tool-executor.js";
import { createSessionIfAbsent } from "../ports/session-creation.js";
import type { RuntimeDeps } from "./deps.js";
import {
  replicaClosing,
  sessionBusy,
  sessionParked,
  startsInOneStep,
  submitOrStart,
  type SessionDriver,
  type Submitted,
} from "./session/index.js";
import { entryCursor, type Latch } from "./stream/index.js";
import { agentBindingPatch, encodeInputPayload, isBoundTo, type AgentPin } from "./turn/index.js";
import { followTurn, openTurnWatch } from "./turn-watch.js";

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
  /**
   * The submitting request's span as a W3C traceparent (ADR 0013), stored with the input: the
   * turn that consumes it hangs under the request. None when tracing is off.
   */
  trace?: string;
}

/** What StreamTurn runs with: the runtime's deps and driver, and the runtime's closing. */
export interface TurnStreams {
  deps: RuntimeDeps;
  driver: SessionDriver;
  /** The runtime is closing: new turns are refused. */
  closing(): boolean;
  /** Aborted when the drain has released every lease: turn streams still open end then. */
  stop: AbortSignal;
}

export async function* streamTurn(
  turns: TurnStreams,
  command: StreamTurnCommand,
  signal: AbortSignal,
): AsyncGenerator<CursoredEvent, void, undefined> {
  const { deps, driver, stop } = turns;
  refuseToStart(turns, command);
  const { sessionId } = command;
  if (command.agent) await bindOnFirstUse(deps, sessionId, command.publicSessionId, command.agent);
  const watch = openTurnWatch(deps, driver, {
    sessionId,
    publicSessionId: command.publicSessionId,
    signal,
    stop,
  });
  let kick: NodeJS.Timeout | undefined;
  try {
    const submitted = await submitTurnInput(deps, driver, command, watch.startsAt);
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
    if (stop.aborted && !signal.aborted) throw replicaClosing("stream");
  } finally {
    clearInterval(kick);
    watch.close();
  }
}

/** A turn is refused before anything is stored while closing, or with a clashing tool name. */
export function refuseToStart({ deps, closing }: TurnStreams, command: StreamTurnCommand): void {
  if (closing()) throw replicaClosing("turn");
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

/** What submitTurnInput stored: the input's id, whether a retry found it, its input_queued. */
export type TurnInputReceipt = {
  inputId: string;
  deduplicated: boolean;
  queued: CursoredEvent | undefined;
} & Omit<Submitted, "submitted">;

/**
 * Stores the input as the busy strategy says, and tells the watch where the stream starts.
 * Returns the input's id and, for input that waits for a running turn, its input_queued. With
 * `interruptOnce`, a retry that found its input already stored interrupts nothing (the first
 * attempt did, and the running turn may be the one that input started).
 */
export async function submitTurnInput(
  deps: RuntimeDeps,
  driver: SessionDriver,
  command: StreamTurnCommand,
  startsAt: Latch<{ cursor: number; readLog: boolean }>,
  interruptOnce = false,
): Promise<TurnInputReceipt> {
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
  const delivery = await deliveryOf(deps, command, current !== undefined, parked?.turnId);
  const draft = {
    sessionId,
    delivery,
    ...(command.clientRequestId ? { sourceKey: command.clientRequestId } : {}),
    payload: encodeInputPayload({
      items: command.items,
      clientTools: command.clientTools,
      settings: command.settings,
    }),
    // Beside the payload, not in it: a retry from another request (another trace) under the same
    // key is the same content.
    ...(command.trace !== undefined && { trace: command.trace }),
  };
  // The ready mark follows the stored input (ADR 0026); it is awaited with the offer to drive.
  // A mark with nothing behind it costs the sweep one empty look; input without a mark would
  // wait for the next client.
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
  const interrupts =
    command.busyStrategy === "interrupt" && !(interruptOnce && receipt.deduplicated);
  if (current && interrupts) await deps.signals.requestCancel(sessionId);
  if (parked && interrupts) await deps.store.cancelParkedTurn(sessionId, parked.turnId);
  const queued: CursoredEvent | undefined =
    receipt.sessionBusy && !receipt.deduplicated
      ? {
          cursor: entryCursor(startSeq),
          sessionId: command.publicSessionId,
          turnId: "",
          event: { type: "input_queued", inputId },
        }
      : undefined;
  return {
    inputId,
    deduplicated: receipt.deduplicated,
    queued,
    ...(marked && { marked }),
    ...(started && { started }),
  };
}

/** Steered input joins the running (or parked) turn; any other waits for the next turn. */
async function deliveryOf(
  deps: RuntimeDeps,
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

/**
 * StreamTurn naming an agent: a session its input creates is created bound to the agent (as
 * CreateSession would); one already bound to that agent is left as it is; any other is refused
 * (UpdateSession moves a pin).
 */
async function bindOnFirstUse(
  deps: RuntimeDeps,
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
