// A next-turn input stored durably and offered to run, with nobody following the turn: the
// front door's session create (ADR 0037) submits its first input this way, as a schedule's fire
// does. The store takes the input (SubmitInput's operation), the ready hint follows it, and this
// replica offers to drive the session now; the sweep is the backstop.
import type { InputItem } from "../domain/conversation.js";
import type { SessionId } from "../domain/ids.js";
import type { SubmitInputReceipt } from "../domain/inputs.js";
import type { RuntimeDeps } from "./deps.js";
import { replicaClosing, type SessionDriver } from "./session/index.js";
import { encodeInputPayload } from "./turn/index.js";

export interface SubmitInputCommand {
  sessionId: SessionId;
  items: InputItem[];
  /** The input's idempotency key: a second submit with it stores nothing new. */
  sourceKey?: string;
}

export async function submitNextTurnInput(
  deps: RuntimeDeps,
  driver: SessionDriver,
  closing: boolean,
  command: SubmitInputCommand,
): Promise<SubmitInputReceipt> {
  if (closing) throw replicaClosing("turn");
  const receipt = await deps.store.submitInput({
    sessionId: command.sessionId,
    delivery: { kind: "next_turn" },
    ...(command.sourceKey !== undefined && { sourceKey: command.sourceKey }),
    payload: encodeInputPayload({ items: command.items, clientTools: [], settings: {} }),
  });
  // Marked once stored, never before (a holder's clear looks after it, ADR 0026).
  await deps.ready.markReady(command.sessionId);
  void driver.ensureDriven(command.sessionId).catch(() => undefined);
  return receipt;
}
