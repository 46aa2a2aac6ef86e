// Tools the client executes: the turn announces the call on its stream (tool_call_requested) and
// waits for SubmitToolResults, which may arrive on any replica and reaches this one as a signal.
import type { ClientToolResult } from "../ports/session-signals.js";
import type {
  ToolCallRequest,
  ToolContext,
  ToolDefinition,
  ToolExecutor,
  ToolResult,
} from "../ports/tool-executor.js";

export interface ClientToolBridge extends ToolExecutor {
  /** Called by the signal listener; results that arrive before the call waits are kept. */
  deliver(result: ClientToolResult): void;
  /** Calls announced to the client and not answered yet. */
  waiting(): number;
}

/** `onWait` runs whenever a call starts waiting for the client's answer. */
export function createClientToolBridge(
  definitions: readonly ToolDefinition[],
  onWait: () => void = () => undefined,
): ClientToolBridge {
  const early = new Map<string, ClientToolResult>();
  const waiting = new Map<string, (result: ClientToolResult) => void>();

  const asToolResult = (r: ClientToolResult): ToolResult => ({
    output: r.output,
    isError: r.isError,
  });

  return {
    definitions: () => definitions,
    waiting: () => waiting.size,
    deliver(result) {
      const waiter = waiting.get(result.callId);
      if (waiter) waiter(result);
      else early.set(result.callId, result);
    },
    execute(call: ToolCallRequest, context: ToolContext): Promise<ToolResult> {
      const ready = early.get(call.callId);
      if (ready) {
        early.delete(call.callId);
        return Promise.resolve(asToolResult(ready));
      }
      // The engine's per-call timeout and the turn's cancellation both arrive as this abort.
      return new Promise<ToolResult>((resolve, reject) => {
        const onAbort = (): void => {
          waiting.delete(call.callId);
          reject(
            context.signal.reason instanceof Error ? context.signal.reason : new Error("aborted"),
          );
        };
        if (context.signal.aborted) return onAbort();
        context.signal.addEventListener("abort", onAbort, { once: true });
        waiting.set(call.callId, (result) => {
          waiting.delete(call.callId);
          context.signal.removeEventListener("abort", onAbort);
          resolve(asToolResult(result));
        });
        onWait();
      });
    },
  };
}

/** Server tools and client tools behind one executor; names must not collide. */
export function combineExecutors(
  server: ToolExecutor | undefined,
  client: ClientToolBridge,
): ToolExecutor {
  const clientNames = new Set(client.definitions().map((d) => d.name));
  const serverDefs = (server?.definitions() ?? []).filter((d) => !clientNames.has(d.name));
  const definitions = [...serverDefs, ...client.definitions()];
  return {
    definitions: () => definitions,
    execute: (call, context) =>
      clientNames.has(call.toolName) || !server
        ? client.execute(call, context)
        : server.execute(call, context),
  };
}
