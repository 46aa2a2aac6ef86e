// Input delivered without following its turn (the Agents API's POST /events, ADR 0037): stored
// as the busy strategy says, exactly as StreamTurn stores it (stream-turn.ts), and the session
// offered to drive; the caller learns only what was stored. Events reach it by watching.
import { TetherError } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { RuntimeDeps } from "./deps.js";
import { createLatch } from "./stream/index.js";
import { decodeCommitted, encodeInputPayload, submittingTrace } from "./turn/index.js";
import {
  refuseToStart,
  submitTurnInput,
  type StreamTurnCommand,
  type TurnStreams,
} from "./stream-turn.js";

export interface SubmittedTurnInput {
  inputId: string;
  /** A retry under the same key found the input already stored: nothing new was done. */
  deduplicated: boolean;
  /** A turn held the session: the input waits for it, or was steered into it. */
  queued: boolean;
}

export async function submitTurn(
  turns: TurnStreams,
  command: StreamTurnCommand,
): Promise<SubmittedTurnInput> {
  refuseToStart(turns, command);
  try {
    return await storeAndOffer(turns, command);
  } catch (error) {
    // A steered input's stored content names the turn it joined, so a retry under the same key
    // that finds another state (the first attempt started the turn now running) differs only in
    // its delivery: the next-turn form is the one the first attempt stored if it found no turn.
    const retriedSteer =
      error instanceof TetherError &&
      error.code === "source_key_conflict" &&
      command.busyStrategy === "steer";
    if (!retriedSteer) throw error;
    try {
      return await storeAndOffer(turns, { ...command, busyStrategy: "enqueue" });
    } catch (again) {
      if (!(again instanceof TetherError) || again.code !== "source_key_conflict") throw again;
      return (await steeredEarlier(turns.deps, command)) ?? raise(again);
    }
  }
}

/** How many of the session's latest turns a retried steer looks for its first attempt in. */
const RECENT_TURNS = 8;

/**
 * A steered retry's first attempt may have joined a turn that has ended since: its input is
 * found under the key by offering the same content steered into each recent turn. Under a key
 * already used, the store writes nothing: it returns the input whose content matches, or refuses
 * (source_key_conflict), so trying is safe. Undefined when none matches: the content differs.
 */
async function steeredEarlier(
  deps: RuntimeDeps,
  command: StreamTurnCommand,
): Promise<SubmittedTurnInput | undefined> {
  const { sessionId } = command;
  const snapshot = await deps.store.loadSession(sessionId);
  const turnIds: string[] = [];
  for (let i = (snapshot?.messages.length ?? 0) - 1; i >= 0 && turnIds.length < RECENT_TURNS; i--) {
    const turnId = decodeCommitted(snapshot?.messages[i] ?? "").mark.turnId;
    if (turnId && !turnIds.includes(turnId)) turnIds.push(turnId);
  }
  const payload = encodeInputPayload({
    items: command.items,
    clientTools: command.clientTools,
    settings: command.settings,
    ...submittingTrace(deps),
  });
  for (const turnId of turnIds) {
    try {
      const receipt = await deps.store.submitInput({
        sessionId,
        delivery: { kind: "active_turn", turnId, minBoundary: "after_work" },
        ...(command.clientRequestId !== undefined && { sourceKey: command.clientRequestId }),
        payload,
      });
      return { inputId: receipt.input.inputId, deduplicated: receipt.deduplicated, queued: false };
    } catch (error) {
      if (!(error instanceof TetherError) || error.code !== "source_key_conflict") throw error;
    }
  }
  return undefined;
}

function raise(error: unknown): never {
  throw error;
}

async function storeAndOffer(
  { deps, driver }: TurnStreams,
  command: StreamTurnCommand,
): Promise<SubmittedTurnInput> {
  const { sessionId } = command;
  // Nobody follows the log from here: where it starts is of no use.
  const startsAt = createLatch<{ cursor: number; readLog: boolean }>();
  const stored = await submitTurnInput(deps, driver, command, startsAt, true);
  const offer = stored.started
    ? driver.driveStarted(sessionId, stored.started)
    : driver.ensureDriven(sessionId);
  await Promise.all([offer, stored.marked]);
  return {
    inputId: stored.inputId,
    deduplicated: stored.deduplicated,
    queued: stored.queued !== undefined,
  };
}

/** The turn that takes answers now: the parked one, else the one running on some replica. */
export async function currentTurn(
  deps: RuntimeDeps,
  sessionId: SessionId,
): Promise<string | undefined> {
  const parked = await deps.store.readParkedTurn(sessionId);
  return parked?.turnId ?? (await deps.signals.activeTurn(sessionId));
}
