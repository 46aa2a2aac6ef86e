// The end of a turn that stopped between its tool batches and will not go on (a parked turn that
// was cancelled or expired while it waited): the engine closes its open batch, so every call of
// the transcript has its answer, and returns the turn's result as any run of it would.
import type { TurnOutcome } from "../domain/turn-outcome.js";
import type { TurnEventSink } from "../ports/event-sink.js";
import type { ToolResult } from "../ports/tool-executor.js";
import { knownResultRecord } from "./tool-dispatch.js";
import type { TurnProgress, TurnResult } from "./turn-contract.js";

export interface TurnClosure {
  turnId: string;
  /** The turn's state at the start of its open batch. */
  progress: TurnProgress;
  /** How the turn stopped. */
  outcome: Extract<TurnOutcome, { kind: "stopped" }>;
  /** The result a call of the open batch already has: a tool that finished, a client's answer. */
  resultOf(callId: string): ToolResult | undefined;
  /** What a call without a result is told (it gets an error result, never a gap). */
  unrun: string;
  sink?: TurnEventSink;
}

export async function closeTurn(closure: TurnClosure): Promise<TurnResult> {
  const { progress, sink } = closure;
  const messages = [...progress.messages];
  const toolCalls = [...progress.toolCalls];
  for (const call of progress.batch) {
    const result = closure.resultOf(call.callId) ?? { output: closure.unrun, isError: true };
    const r = knownResultRecord(call, result);
    toolCalls.push(r);
    messages.push({
      role: "tool",
      callId: r.callId,
      toolName: r.toolName,
      content: r.content,
      isError: r.status !== "ok",
    });
    await sink?.emit({
      type: "tool_result",
      callId: r.callId,
      toolName: r.toolName,
      status: r.status,
      content: r.content,
    });
  }
  await sink?.emit({ type: "terminal", outcome: closure.outcome });
  return {
    turnId: closure.turnId,
    outcome: closure.outcome,
    messages,
    assistantText: progress.assistantText,
    toolCalls,
    usage: progress.usage,
    iterations: progress.iterations,
  };
}
