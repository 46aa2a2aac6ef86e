// Input delivered without following its turn (the Agents API's POST /events, ADR 0037): stored
// as the busy strategy says, exactly as StreamTurn stores it (stream-turn.ts), and the session
// offered to drive; the caller learns only what was stored. Events reach it by watching.
import type { SessionId } from "../domain/ids.js";
import type { RuntimeDeps } from "./deps.js";
import { createLatch } from "./stream/index.js";
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
  // Under a key already used, the store answers with the stored input whatever its delivery (the
  // content hash leaves the delivery out): a steered retry finds its input after its turn ended.
  return storeAndOffer(turns, command);
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
