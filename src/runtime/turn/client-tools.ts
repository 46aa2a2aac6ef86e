// Tools the client executes. The turn records each call in the store before it announces it on
// the stream (tool_call_requested), so an answer can land from the moment the client can see
// the call: SubmitToolResults on any replica stores the first answer (the store decides, ADR
// 0001), and this replica learns of it from a signal, or by reading the store every
// ANSWER_POLL_MS while it waits, so a lost signal delays an answer but never loses it. The bridge
// owns each call's deadline: it closes the call in the store first, and only a call the store
// closed unanswered times out; an answer the store accepted is always the one the turn uses.
import type { LeaseFence } from "../../domain/lease.js";
import type { ClientToolResult, ToolCallState } from "../../domain/tool-calls.js";
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
  record(waitId: string): Promise<void>;
  /** States read from the store (a resumed turn): answered waits resolve at once. */
  preload(states: readonly ToolCallState[]): void;
  /** Whether the client answered the wait already (in this run or an earlier one of the turn). */
  isAnswered(waitId: string): boolean;
  /** An answer the store accepted, as a signal brought it; unknown or settled calls are dropped. */
  deliver(result: ClientToolResult): void;
  /** Waits announced and not answered yet (client calls and approvals). */
  waiting(): number;
  waitingIds(): string[];
  /** Waits for a recorded wait's answer; the deadline closes it in the store first. */
  awaitAnswer(waitId: string, signal: AbortSignal): Promise<ClientToolResult | Unanswered>;
  /** Closes every wait still open in the store (the turn stops waiting); no-op without any. */
  closeAll(): Promise<void>;
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
  resolve(result: ClientToolResult | Unanswered): void;
  reject(error: Error): void;
}

const asToolResult = (r: ClientToolResult): ToolResult => ({
  output: r.output,
  isError: r.isError,
});

export function createClientToolBridge(options: ClientToolBridgeOptions): ClientToolBridge {
  const { store, fence, turnId } = options;
  const recorded = new Map<string, ToolCallState>();
  const waiting = new Map<string, Waiter>();
  let poll: NodeJS.Timeout | undefined;

  const settle = (state: ToolCallState): void => {
    recorded.set(state.callId, state);
    if (state.status !== "answered") return;
    const waiter = waiting.get(state.callId);
    waiting.delete(state.callId);
    waiter?.resolve(state.answer);
    if (waiting.size === 0) stopPolling();
  };

  const readAnswers = async (): Promise<void> => {
    try {
      for (const state of await store.readToolCalls(fence.sessionId, turnId)) {
        if (waiting.has(state.callId)) settle(state);
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

  /** The deadline: close the call in the store; an answer stored first wins over the timeout. */
  const expire = async (callId: string): Promise<void> => {
    if (!waiting.has(callId)) return;
    let states: ToolCallState[];
    try {
      states = await store.closeToolCalls(fence, turnId, [callId]);
    } catch (error) {
      const waiter = waiting.get(callId);
      waiting.delete(callId);
      waiter?.reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    const state = states.find((s) => s.callId === callId);
    if (state?.status === "answered") return settle(state);
    const waiter = waiting.get(callId);
    waiting.delete(callId);
    if (waiting.size === 0) stopPolling();
    waiter?.resolve("timed_out");
  };

  const bridge: ClientToolBridge = {
    definitions: () => options.definitions,
    waiting: () => waiting.size,
    waitingIds: () => [...waiting.keys()],
    isAnswered: (waitId) => recorded.get(waitId)?.status === "answered",

    async record(waitId) {
      const [state] = await store.recordToolCalls(fence, turnId, [waitId]);
      if (state) recorded.set(waitId, state);
    },

    preload(states) {
      for (const state of states) recorded.set(state.callId, state);
    },

    deliver(result) {
      if (recorded.get(result.callId)?.status !== "pending") return;
      settle({ callId: result.callId, status: "answered", answer: result });
    },

    awaitAnswer(waitId, signal) {
      const state = recorded.get(waitId);
      if (state?.status === "answered") return Promise.resolve(state.answer);
      if (state?.status === "closed") return Promise.resolve("closed" as const);
      return new Promise<ClientToolResult | Unanswered>((resolve, reject) => {
        const deadline = (options.setTimer ?? setTimeout)(
          () => void expire(waitId),
          options.timeoutMs,
        );
        let unhear: Dispose = () => undefined;
        const done = (): void => {
          clearTimeout(deadline);
          unhear();
        };
        // Cancellation of the turn (the engine's own timeout is longer than the deadline), or
        // the turn parked: the wait stays open in the store for whoever resumes the turn.
        const aborted = (): void => {
          done();
          waiting.delete(waitId);
          if (waiting.size === 0) stopPolling();
          reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
        };
        if (signal.aborted) return aborted();
        unhear = onAbort(signal, aborted);
        waiting.set(waitId, {
          resolve: (result) => {
            done();
            resolve(result);
          },
          reject: (error) => {
            done();
            reject(error);
          },
        });
        startPolling();
        options.onWait?.();
      });
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

    async closeAll() {
      stopPolling();
      if (recorded.size === 0) return;
      await store.closeToolCalls(fence, turnId);
    },
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
