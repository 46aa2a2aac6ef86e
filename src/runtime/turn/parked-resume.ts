// The end of a parked turn that will not go on: cancelled or expired while it waited. It is
// committed once, as any turn: the engine closes its open batch, where each call keeps the real
// result it has (a server tool that finished, a client's answer that arrived) and every other
// call gets an error result, so the stored transcript pairs every call.
import type { ToolCallState } from "../../domain/tool-calls.js";
import type { TurnEvent } from "../../domain/turn-events.js";
import { closeTurn, type TurnResult } from "../../engine/index.js";
import type { ToolResult } from "../../ports/tool-executor.js";
import type { ParkedProgress } from "./turn-parking.js";

export function endParkedTurn(
  turnId: string,
  saved: ParkedProgress,
  status: "cancelled" | "expired",
  states: readonly ToolCallState[],
  sink: { emit(event: TurnEvent): Promise<void> },
): Promise<TurnResult> {
  const answers = new Map<string, ToolResult>();
  for (const s of states) {
    if (s.status === "answered") {
      answers.set(s.callId, { output: s.answer.output, isError: s.answer.isError });
    }
  }
  return closeTurn({
    turnId,
    progress: saved.engine,
    outcome:
      status === "cancelled"
        ? { kind: "stopped", reason: "cancelled" }
        : { kind: "stopped", reason: "park_expired" },
    resultOf: (callId) => saved.settled[callId] ?? answers.get(callId),
    unrun:
      status === "cancelled"
        ? "not run: the turn was cancelled while it waited"
        : "not run: the turn expired while it waited",
    sink,
  });
}
