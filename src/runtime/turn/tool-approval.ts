// Tool approval: a call of a tool that needs approval is an ApprovalRequest that waits for its
// ApprovalDecision (DecideToolCalls, any replica) before it runs. The decision settles the call's
// approval wait in the store (domain/tool-calls.ts), so the first decision wins and a turn that
// parks on it finds it there when it resumes. Approved: the call runs (a server tool) or goes to
// the client; denied: the model gets an error result carrying the reason.
import type { ApprovalRequest } from "../../domain/tool-calls.js";
import type { ToolDefinition, ToolExecutor } from "../../ports/tool-executor.js";
import type { ClientToolBridge } from "./client-tools.js";

/** Which tools need approval: the client's flags, the turn's list and the operator's. */
export function approvalPolicy(
  clientTools: readonly ToolDefinition[],
  ...lists: (readonly string[] | undefined)[]
): (toolName: string) => boolean {
  const names = new Set<string>(lists.flatMap((l) => l ?? []));
  for (const tool of clientTools) if (tool.requiresApproval === true) names.add(tool.name);
  return (toolName) => names.has(toolName);
}

export interface ApprovalGateOptions {
  needsApproval: (toolName: string) => boolean;
  waits: Pick<ClientToolBridge, "awaitDecision" | "isSettled">;
  /** Shows the approved call's start (or hands it to the client) before it runs. */
  announceRun: (callId: string, toolName: string) => Promise<void>;
  timeoutMs: number;
}

export function withApprovals(inner: ToolExecutor, options: ApprovalGateOptions): ToolExecutor {
  return {
    definitions: () => inner.definitions(),
    async execute(call, context) {
      if (!options.needsApproval(call.toolName)) return inner.execute(call, context);
      const request: ApprovalRequest = {
        callId: call.callId,
        toolName: call.toolName,
        argumentsJson: call.argumentsJson,
      };
      const decision = await options.waits.awaitDecision(request, context.signal);
      if (decision === "timed_out" || decision === "closed") {
        return {
          output: `not run: no approval decision for ${call.toolName} within ${options.timeoutMs} ms`,
          isError: true,
        };
      }
      if (!decision.approve) {
        const reason = decision.reason === "" ? "no reason given" : decision.reason;
        return { output: `not run: the call was denied (${reason})`, isError: true };
      }
      // A client call an earlier run of the turn handed over is shown again unless its answer
      // is in: that run may have recorded the wait and died before its request reached the
      // log, and a call the client never saw would hold the turn until it expires. A request
      // shown twice is harmless: answers are first-wins by call id, under one idempotency key.
      // (A run that parked after showing it carries it in its shown keys and skips it.)
      if (!options.waits.isSettled({ kind: "result", callId: call.callId })) {
        await options.announceRun(call.callId, call.toolName);
      }
      return inner.execute(call, context);
    },
  };
}
