// Runs the tool calls of one model response concurrently. Every call ends with exactly one result,
// real or synthetic (unknown tool, malformed arguments, thrown error, timeout, cancellation), so
// the conversation never holds a tool call without its answer.
import type { JsonValue, ToolCallPart } from "../domain/conversation.js";
import type { ToolResultStatus, TurnEvent } from "../domain/turn-events.js";
import type { Sleep } from "../ports/sleep.js";
import type {
  ToolCallRequest,
  ToolControl,
  ToolExecutor,
  ToolResult,
} from "../ports/tool-executor.js";
import { ABORTED, ChildController, errorMessage, type TurnCancellation } from "./abort.js";

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
  cancellation: TurnCancellation;
  sleep: Sleep;
  /** 0 disables the per-call timeout. */
  timeoutMs: number;
  events: { emit(event: TurnEvent): void | Promise<void> };
}

const TIMED_OUT: unique symbol = Symbol("timed-out");
const SETTLED = new Error("tool call settled");

/** Results in the order of `calls`; tool_result events go out in completion order. */
export async function dispatchToolCalls(
  calls: readonly ToolCallPart[],
  options: DispatchOptions,
): Promise<ToolCallRecord[]> {
  for (const call of calls) {
    const r = options.events.emit({
      type: "tool_call_proposed",
      callId: call.callId,
      toolName: call.toolName,
      argumentsJson: call.argumentsJson,
    });
    if (r !== undefined) await r;
  }
  const batch = new ResultEmitter(options);
  const pending: Promise<ToolCallRecord>[] = [];
  for (const call of calls) {
    const prepared = prepare(call, options);
    if ("rejected" in prepared) {
      pending.push(Promise.resolve(batch.finish(prepared.rejected)));
      continue;
    }
    const r = options.events.emit({
      type: "tool_call_dispatched",
      callId: call.callId,
      toolName: call.toolName,
    });
    if (r !== undefined) await r;
    pending.push(runOne(call, prepared.args, options).then((r) => batch.finish(r)));
  }
  const only = pending.length === 1 ? pending[0] : undefined;
  const records = only !== undefined ? [await only] : await Promise.all(pending);
  const drained = batch.drained();
  if (drained !== undefined) await drained;
  return records;
}

/** Emits results as calls complete, one at a time even when the sink is asynchronous. */
class ResultEmitter {
  private chain: Promise<void> | undefined;

  constructor(private readonly options: DispatchOptions) {}

  finish(record: ToolCallRecord): ToolCallRecord {
    const event: TurnEvent = {
      type: "tool_result",
      callId: record.callId,
      toolName: record.toolName,
      status: record.status,
      content: record.content,
    };
    if (this.chain !== undefined) {
      this.chain = this.chain.then(() => this.options.events.emit(event));
    } else {
      const r = this.options.events.emit(event);
      if (r !== undefined) this.chain = r;
    }
    return record;
  }

  drained(): Promise<void> | undefined {
    return this.chain;
  }
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
  if (options.cancellation.aborted) return { rejected: cancelledRecord(call) };
  return { args };
}

function runOne(
  call: ToolCallPart,
  args: JsonValue,
  options: DispatchOptions,
): Promise<ToolCallRecord> {
  const executor = options.executor;
  if (executor === undefined) return Promise.resolve(failedRecord(call, "no tool executor"));
  if (options.timeoutMs > 0) return runTimed(call, args, executor, options);
  // Untimed: the turn's signal is the call's signal, and one race settles the call.
  const { cancellation } = options;
  let execution: Promise<ToolResult>;
  try {
    execution = executor.execute(request(call, args), {
      signal: cancellation.signal,
      turnId: options.turnId,
    });
  } catch (err) {
    return Promise.resolve(failedRecord(call, errorMessage(err)));
  }
  return cancellation.race(execution).then(
    (outcome) => (outcome === ABORTED ? cancelledRecord(call) : resultRecord(call, outcome)),
    (err: unknown) =>
      cancellation.aborted ? cancelledRecord(call) : failedRecord(call, errorMessage(err)),
  );
}

async function runTimed(
  call: ToolCallPart,
  args: JsonValue,
  executor: ToolExecutor,
  options: DispatchOptions,
): Promise<ToolCallRecord> {
  const { cancellation, timeoutMs } = options;
  const child = new ChildController(cancellation.signal);
  const timer = new AbortController();
  try {
    const execution = executor.execute(request(call, args), {
      signal: child.signal,
      turnId: options.turnId,
    });
    const timeout = options.sleep(timeoutMs, timer.signal).then(
      (): typeof TIMED_OUT => {
        child.abort(new Error(`tool call timed out after ${timeoutMs} ms`));
        return TIMED_OUT;
      },
      (): typeof ABORTED => ABORTED,
    );
    const outcome = await Promise.race([cancellation.race(execution), timeout]);
    if (outcome === ABORTED) return cancelledRecord(call);
    if (outcome === TIMED_OUT) return timedOutRecord(call, timeoutMs);
    return resultRecord(call, outcome);
  } catch (err) {
    if (cancellation.aborted) return cancelledRecord(call);
    // The tool gave up on its own aborted signal before the timeout race settled.
    if (child.signal.aborted) return timedOutRecord(call, timeoutMs);
    return failedRecord(call, errorMessage(err));
  } finally {
    // A preset reason: aborting without one allocates a DOMException per call.
    timer.abort(SETTLED);
    child.dispose();
  }
}

function request(call: ToolCallPart, args: JsonValue): ToolCallRequest {
  return {
    callId: call.callId,
    toolName: call.toolName,
    arguments: args,
    argumentsJson: call.argumentsJson,
  };
}

function resultRecord(call: ToolCallPart, result: ToolResult): ToolCallRecord {
  const r = record(call, result.isError === true ? "error" : "ok", result.output);
  if (result.control !== undefined) r.control = result.control;
  return r;
}

/** The record of a call whose result is already known (a control it carried is not acted on). */
export function knownResultRecord(call: ToolCallPart, result: ToolResult): ToolCallRecord {
  return record(call, result.isError === true ? "error" : "ok", result.output);
}

function failedRecord(call: ToolCallPart, message: string): ToolCallRecord {
  return record(call, "error", { error: message });
}

function timedOutRecord(call: ToolCallPart, timeoutMs: number): ToolCallRecord {
  return record(call, "timed_out", { error: `timed out after ${timeoutMs} ms` });
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
