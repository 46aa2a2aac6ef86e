// Two steps of the turn loop that need none of its state beyond what they are handed: a
// checkpoint's admission of steered input and queued work, and the decision a batch's tool
// controls make once the whole batch is done (DESIGN.md section 4, rule 7).
import type { Message } from "../domain/conversation.js";
import type { TurnCheckpoint } from "../domain/inputs.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import type { TurnCheckpointHost } from "../ports/checkpoint-host.js";
import { ABORTED, type TurnCancellation } from "./abort.js";
import type { ToolCallRecord } from "./tool-dispatch.js";

/** What a step reads and writes of the running turn. */
export interface StepTurn {
  append(message: Message): void;
  emit(event: TurnEvent): void | Promise<void>;
}

/** Appends admitted input as user messages; how many, or ABORTED when cancelled meanwhile. */
export async function admitAtCheckpoint(
  host: TurnCheckpointHost | undefined,
  cancellation: TurnCancellation,
  turn: StepTurn,
  at: { turnId: string; checkpoint: TurnCheckpoint; iteration: number },
): Promise<number | typeof ABORTED> {
  if (host === undefined) return 0;
  const { checkpoint } = at;
  const admitted = await cancellation.race(
    host.checkpoint({
      turnId: at.turnId,
      checkpoint,
      iteration: at.iteration,
      signal: cancellation.signal,
    }),
  );
  if (admitted === ABORTED) return ABORTED;
  if (admitted.length === 0) return 0;
  for (const a of admitted) {
    const inputIds = a.source.kind === "steer" ? [a.source.id] : [];
    turn.append({
      role: "user",
      content: [...a.items],
      ...(inputIds.length > 0 && { inputIds }),
    });
  }
  await turn.emit({
    type: "checkpoint_admission",
    checkpoint,
    sources: admitted.map((a) => a.source),
  });
  return admitted.length;
}

/** Rule 7: the first control in call order decides, once the whole batch is done. */
export async function controlOutcome(
  records: readonly ToolCallRecord[],
  turn: StepTurn,
): Promise<TurnOutcome | undefined> {
  const controlled = records.find((r) => r.control !== undefined);
  const control = controlled?.control;
  if (controlled === undefined || control === undefined) return undefined;
  const { toolName, callId } = controlled;
  if (control.type === "fail") {
    return {
      kind: "stopped",
      reason: "tool_error",
      toolName,
      callId,
      code: control.code,
      message: control.message,
    };
  }
  await turn.emit({ type: "tool_final_value", toolName, callId, value: control.value });
  return { kind: "finished", reason: "tool_value", toolName, callId, value: control.value };
}
