// Runs the tool calls of one model response concurrently. Every call ends with exactly one result,
// real or synthetic (unknown tool, malformed arguments, thrown error, timeout, cancellation), so
// the conversation never holds a tool call without its answer.
import type { JsonValue, ToolCallPart } from "../domain/conversation.js";
import type { ToolResultStatus, TurnEvent } from "../domain/turn-events.js";
import type { Sleep } from "../ports/sleep.js";
import type { ToolControl, ToolExecutor } from "../ports/tool-executor.js";
import { ABORTED, childController, errorMessage, raceAbort } from "./abort.js";

export interface ToolCallRecord {
  callId: string;
  toolName: string;
  argumentsJson: string;
  status: ToolResultStatus;
  output: JsonValue;
  /** What the model reads. */
  content: string;
  control?: ToolControl;
}

export interface DispatchOptions {
  executor: ToolExecutor | undefined;
  knownTools: ReadonlySet<string>;
  turnId: string;
  signal: AbortSignal;
  sleep: Sleep;
  /** 0 disables the per-call timeout. */
  timeoutMs: number;
  emit: (event: TurnEvent) => Promise<void>;
}

const TIMED_OUT: unique symbol = Symbol("timed-out");

/** Results in the order of `calls`; tool_result events go out in completion order. */
export async function dispatchToolCalls(
  calls: readonly ToolCallPart[],
  options: DispatchOptions,
): Promise<ToolCallRecord[]> {
  for (const call of calls) {
    await options.emit({
      type: "tool_call_requested",
      callId: call.callId,
      toolName: call.toolName,
      argumentsJson: call.argumentsJson,
    });
  }
  // Completion events from concurrent calls are chained so the sink sees one at a time.
  let chain: Promise<void> = Promise.resolve();
  const finish = (record: ToolCallRecord): ToolCallRecord => {
    chain = chain.then(() =>
      options.emit({
        type: "tool_result",
        callId: record.callId,
        toolName: record.toolName,
        status: record.status,
        content: record.content,
      }),
    );
    return record;
  };

  const pending: Promise<ToolCallRecord>[] = [];
  for (const call of calls) {
    const prepared = prepare(call, options);
    if ("rejected" in prepared) {
      pending.push(Promise.resolve(finish(prepared.rejected)));
      continue;
    }
    await options.emit({ type: "tool_call_started", callId: call.callId, toolName: call.toolName });
    pending.push(runOne(call, prepared.args, options).then(finish));
  }
  const records = await Promise.all(pending);
  await chain;
  return records;
}

/** Unknown tools, malformed arguments and calls after cancellation are answered without running. */
function prepare(
  call: ToolCallPart,
  options: DispatchOptions,
): { rejected: ToolCallRecord } | { args: JsonValue } {
  if (options.executor === undefined || !options.knownTools.has(call.toolName)) {
    const available = [...options.knownTools].join(", ");
    return {
      rejected: record(call, "error", {
        error: `unknown tool "${call.toolName}"; available tools: ${available === "" ? "none" : available}`,
      }),
    };
  }
  let args: JsonValue;
  try {
    args = call.argumentsJson.trim() === "" ? {} : (JSON.parse(call.argumentsJson) as JsonValue);
  } catch (err) {
    return {
      rejected: record(call, "error", {
        error: `arguments are not valid JSON: ${errorMessage(err)}`,
      }),
    };
  }
  if (options.signal.aborted) return { rejected: cancelledRecord(call) };
  return { args };
}

async function runOne(
  call: ToolCallPart,
  args: JsonValue,
  options: DispatchOptions,
): Promise<ToolCallRecord> {
  const executor = options.executor;
  if (executor === undefined) return record(call, "error", { error: "no tool executor" });

  const { controller, dispose } = childController(options.signal);
  const timer = new AbortController();
  try {
    const execution = executor.execute(
      {
        callId: call.callId,
        toolName: call.toolName,
        arguments: args,
        argumentsJson: call.argumentsJson,
      },
      { signal: controller.signal, turnId: options.turnId },
    );
    const racers: Promise<unknown>[] = [raceAbort(execution, controller.signal)];
    if (options.timeoutMs > 0) {
      racers.push(
        options.sleep(options.timeoutMs, timer.signal).then(
          () => {
            controller.abort(new Error(`tool call timed out after ${options.timeoutMs} ms`));
            return TIMED_OUT;
          },
          () => ABORTED,
        ),
      );
    }
    const outcome = await Promise.race(racers);
    if (outcome === TIMED_OUT) {
      return record(call, "timed_out", { error: `timed out after ${options.timeoutMs} ms` });
    }
    if (outcome === ABORTED) {
      return options.signal.aborted
        ? cancelledRecord(call)
        : record(call, "timed_out", { error: `timed out after ${options.timeoutMs} ms` });
    }
    const result = outcome as Awaited<ReturnType<ToolExecutor["execute"]>>;
    const r = record(call, result.isError === true ? "error" : "ok", result.output);
    if (result.control !== undefined) r.control = result.control;
    return r;
  } catch (err) {
    if (options.signal.aborted) return cancelledRecord(call);
    return record(call, "error", { error: errorMessage(err) });
  } finally {
    timer.abort();
    dispose();
  }
}

function cancelledRecord(call: ToolCallPart): ToolCallRecord {
  return record(call, "cancelled", {
    error: "cancelled: the turn was cancelled before this tool call finished",
  });
}

function record(call: ToolCallPart, status: ToolResultStatus, output: JsonValue): ToolCallRecord {
  return {
    callId: call.callId,
    toolName: call.toolName,
    argumentsJson: call.argumentsJson,
    status,
    output,
    content: typeof output === "string" ? output : JSON.stringify(output),
  };
}
