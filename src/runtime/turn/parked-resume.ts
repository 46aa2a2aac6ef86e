// The end of a parked turn that will not go on: cancelled or expired while it waited. It is
// committed once, as any turn: the calls of its open batch keep the real results they have (a
// server tool that finished, a client's answer that arrived) and every other call gets an error
// result, so the stored transcript pairs every call and stays valid for strict providers.
import type { Message } from "../../domain/conversation.js";
import type { ToolCallState } from "../../domain/tool-calls.js";
import type { TurnEvent } from "../../domain/turn-events.js";
import type { TurnOutcome } from "../../domain/turn-outcome.js";
import type { TurnResult } from "../../engine/index.js";
import type { ToolResult } from "../../ports/tool-executor.js";
import type { ParkedProgress } from "./turn-parking.js";

const contentOf = (output: unknown): string =>
  typeof output === "string" ? output : JSON.stringify(output);

export async function endParkedTurn(
  saved: ParkedProgress,
  status: "cancelled" | "expired",
  states: readonly ToolCallState[],
  sink: { emit(event: TurnEvent): Promise<void> },
): Promise<TurnResult> {
  const answers = new Map(states.flatMap((s) => (s.status === "answered" ? [[s.callId, s]] : [])));
  const why =
    status === "cancelled"
      ? "not run: the turn was cancelled while it waited"
      : "not run: the turn expired while it waited";
  const messages: Message[] = [...saved.engine.messages];
  const toolCalls = [...saved.engine.toolCalls];
  for (const call of saved.engine.batch) {
    const answer = answers.get(call.callId);
    const result: ToolResult =
      saved.settled[call.callId] ??
      (answer?.status === "answered"
        ? { output: answer.answer.output, isError: answer.answer.isError }
        : { output: why, isError: true });
    const content = contentOf(result.output);
    const failed = result.isError === true;
    messages.push({
      role: "tool",
      callId: call.callId,
      toolName: call.toolName,
      content,
      isError: failed,
    });
    toolCalls.push({
      callId: call.callId,
      toolName: call.toolName,
      argumentsJson: call.argumentsJson,
      status: failed ? "error" : "ok",
      output: result.output,
      content,
    });
    await sink.emit({
      type: "tool_result",
      callId: call.callId,
      toolName: call.toolName,
      status: failed ? "error" : "ok",
      content,
    });
  }
  const outcome: TurnOutcome =
    status === "cancelled"
      ? { kind: "stopped", reason: "cancelled" }
      : { kind: "stopped", reason: "park_expired" };
  return {
    turnId: "",
    outcome,
    messages,
    assistantText: saved.engine.assistantText,
    toolCalls,
    usage: saved.engine.usage,
    iterations: saved.engine.iterations,
  };
}
