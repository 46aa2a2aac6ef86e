// Tools the client executes. The turn records each call in the store before it announces it on
// the stream (tool_call_requested), so an answer can land from the moment the client can see
// the call: SubmitToolResults on any replica stores the first answer (the store decides, ADR
// 0001), and this replica learns of it from a signal, or by reading the store every
// ANSWER_POLL_MS while it waits, so a lost signal delays an answer but never loses it. The bridge
// owns each call's deadline: it closes the call in the store first, and only a call the store
// closed unanswered times out; an answer the store accepted is always the one the turn uses.
import type { LeaseFence } from "../../domain/lease.js";
import type {
  ApprovalDecision,
  ApprovalRequest,
  ClientToolResult,
  SettledWait,
  ToolCallState,
  ToolWait,
} from "../../domain/tool-calls.js";
import type { ToolCallStore } from "../../ports/runtime-store.js";
import { onAbort, type Dispose } from "../stream/index.js";
import type {
  ToolCallRequest,
  ToolContext,
  ToolDefinition,
  ToolExecutor,
  ToolResult,
} from "../../ports/tool-executor.js";

/** How often a waiting turn reads its answers from the store, besides the signals. */
export const ANSWER_POLL_MS = 1_000;

/** How a wait ended without an answer: its own deadline, or the store had closed it before. */
export type Unanswered = "timed_out" | "closed";

export interface ClientToolBridge extends ToolExecutor {
  /** Records a wait in the store; called before the call or approval is announced. */
  record(wait: ToolWait): Promise<void>;
  /** States read from the store (a resumed turn): settled waits resolve at once. */
  preload(states: readonly ToolCallState[]): void;
  /** Whether the wait is settled already (in this run or an earlier one of the turn). */
  isSettled(wait: ToolWait): boolean;
  /** What the store accepted, as a signal brought it; unknown or settled waits are dropped. */
  deliver(settled: SettledWait): void;
  /** Waits announced and not settled yet (client calls and approvals). */
  waiting(): number;
  waits(): ToolWait[];
  /** Waits for a recorded call's result; the deadline closes it in the store first. */
  awaitAnswer(callId: string, signal: AbortSignal): Promise<ClientToolResult | Unanswered>;
  /** Waits for the decision on a recorded approval request, as awaitAnswer. */
  awaitDecision(
    request: ApprovalRequest,
    signal: AbortSignal,
  ): Promise<ApprovalDecision | Unanswered>;
  /**
   * Closes every wait still open in the store (the turn stops waiting); no-op without any.
   * `closedInStore`: the commit that announced the turn closed them in its own step (ADR 0023),
   * so only the local polling stops and the lease is not needed.
   */
  closeAll(closedInStore?: boolean): Promise<void>;
  /** Whether the turn recorded a call to close (closeAll then needs the lease). */
  hasCalls(): boolean;
}

export interface ClientToolBridgeOptions {
  definitions: readonly ToolDefinition[];
  store: ToolCallStore;
  fence: LeaseFence;
  turnId: string;
  /** How long a call waits for its answer before the store closes it. */
  timeoutMs: number;
  /** Runs whenever a call starts waiting for the client's answer. */
  onWait?: () => void;
  setTimer?: (fn: () => void, ms: number) => NodeJS.Timeout;
}

interface Waiter {
  resolve(settled: SettledWait | Unanswered): void;
  reject(error: Error): void;
}

/** One map per kind of wait, keyed by call id: a call's result and its approval stay apart. */
function byKind<T>(): Record<ToolWait["kind"], Map<string, T>> {
  return { result: new Map<string, T>(), approval: new Map<string, T>() };
}

const asToolResult = (r: ClientToolResult): ToolResult => ({
  output: r.output,
  isError: r.isError,
});

export function createClientToolBridge(options: ClientToolBridgeOptions): ClientToolBridge {
  const { store, fence, turnId } = options;
  const recorded = byKind<ToolCallState>();
  const waiting = byKind<Waiter>();
  let poll: NodeJS.Timeout | undefined;

  const waitCount = (): number => waiting.result.size + waiting.approval.size;
  const takeWaiter = (wait: ToolWait): Waiter | undefined => {
    const waiter = waiting[wait.kind].get(wait.callId);
    waiting[wait.kind].delete(wait.callId);
    if (waitCount() === 0) stopPolling();
    return waiter;
  };

  const settle = (state: ToolCallState): void => {
    recorded[state.kind].set(state.callId, state);
    if (state.status !== "answered" && state.status !== "decided") return;
    takeWaiter(state)?.resolve(state);
  };

  const readAnswers = async (): Promise<void> => {
    try {
      for (const state of await store.readToolCalls(fence.sessionId, turnId)) {
        if (waiting[state.kind].has(state.callId)) settle(state);
      }
    } catch {
      // The store is unreachable for now: the next poll, a signal or the deadline decides.
    }
  };
  const stopPolling = (): void => {
    if (poll !== undefined) clearInterval(poll);
    poll = undefined;
  };
  const startPolling = (): void => {
    if (poll === undefined) poll = setInterval(() => void readAnswers(), ANSWER_POLL_MS);
    poll.unref();
  };

  /** The deadline: close the wait in the store; what the store settled first wins over it. */
  const expire = async (wait: ToolWait): Promise<void> => {
    if (!waiting[wait.kind].has(wait.callId)) return;
    let states: ToolCallState[];
    try {
      states = await store.closeToolCalls(fence, turnId, [wait]);
    } catch (error) {
      takeWaiter(wait)?.reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    const state = states.find((s) => s.kind === wait.kind && s.callId === wait.callId);
    if (state?.status === "answered" || state?.status === "decided") return settle(state);
    takeWaiter(wait)?.resolve("timed_out");
  };

  const awaitSettled = (wait: ToolWait, signal: AbortSignal): Promise<SettledWait | Unanswered> => {
    const state = recorded[wait.kind].get(wait.callId);
    if (state?.status === "answered" || state?.status === "decided") return Promise.resolve(state);
    if (state?.status === "closed") return Promise.resolve("closed" as const);
    return new Promise<SettledWait | Unanswered>((resolve, reject) => {
      const deadline = (options.setTimer ?? setTimeout)(() => void expire(wait), options.timeoutMs);
      let unhear: Dispose = () => undefined;
      const done = (): void => {
        clearTimeout(deadline);
        unhear();
      };
      // Cancellation of the turn (the engine's own timeout is longer than the deadline), or
      // the turn parked: the wait stays open in the store for whoever resumes the turn.
      const aborted = (): void => {
        done();
        takeWaiter(wait);
        reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      };
      if (signal.aborted) return aborted();
      unhear = onAbort(signal, aborted);
      waiting[wait.kind].set(wait.callId, {
        resolve: (settled) => {
          done();
          resolve(settled);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      startPolling();
      options.onWait?.();
    });
  };

  const bridge: ClientToolBridge = {
    definitions: () => options.definitions,
    waiting: waitCount,
    waits: () => [
      ...[...waiting.result.keys()].map((callId): ToolWait => ({ kind: "result", callId })),
      ...[...waiting.approval.keys()].map((callId): ToolWait => ({ kind: "approval", callId })),
    ],
    isSettled: (wait) => {
      const status = recorded[wait.kind].get(wait.callId)?.status;
      return status === "answered" || status === "decided";
    },

    async record(wait) {
      const [state] = await store.recordToolCalls(fence, turnId, [wait]);
      if (state) recorded[wait.kind].set(wait.callId, state);
    },

    preload(states) {
      for (const state of states) recorded[state.kind].set(state.callId, state);
    },

    deliver(settled) {
      if (recorded[settled.kind].get(settled.callId)?.status !== "pending") return;
      settle(settled);
    },

    // A result wait settles only as answered and an approval only as decided (the store keeps
    // the kinds apart), so the other branch of each is never taken.
    async awaitAnswer(callId, signal) {
      const settled = await awaitSettled({ kind: "result", callId }, signal);
      if (typeof settled === "string") return settled;
      return settled.status === "answered" ? settled.answer : "closed";
    },

    async awaitDecision(request, signal) {
      const settled = await awaitSettled({ kind: "approval", callId: request.callId }, signal);
      if (typeof settled === "string") return settled;
      return settled.status === "decided" ? settled.decision : "closed";
    },

    async execute(call: ToolCallRequest, context: ToolContext): Promise<ToolResult> {
      const answer = await bridge.awaitAnswer(call.callId, context.signal);
      if (answer === "timed_out") {
        return {
          output: `the client did not answer within ${options.timeoutMs} ms`,
          isError: true,
        };
      }
      if (answer === "closed") return { output: "the call was closed unanswered", isError: true };
      return asToolResult(answer);
    },

    async closeAll(closedInStore = false) {
      stopPolling();
      if (closedInStore || !bridge.hasCalls()) return;
      await store.closeToolCalls(fence, turnId);
    },
    hasCalls: () => recorded.result.size + recorded.approval.size > 0,
  };
  return bridge;
}

/** Several server-side executors as one; a name two of them define goes to the first. */
export function joinExecutors(
  ...executors: (ToolExecutor | undefined)[]
): ToolExecutor | undefined {
  const present = executors.filter((e): e is ToolExecutor => e !== undefined);
  if (present.length <= 1) return present[0];
  const owner = new Map<string, ToolExecutor>();
  const definitions: ToolDefinition[] = [];
  for (const executor of present) {
    for (const d of executor.definitions()) {
      if (owner.has(d.name)) continue;
      owner.set(d.name, executor);
      definitions.push(d);
    }
  }
  return {
    definitions: () => definitions,
    execute: (call, context) => {
      const executor = owner.get(call.toolName);
      if (!executor) return Promise.reject(new Error(`no tool named ${call.toolName}`));
      return executor.execute(call, context);
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
