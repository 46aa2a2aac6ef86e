// The turn loop: model call, tool calls, checkpoint, repeat, until exactly one terminal outcome
// (DESIGN.md section 4). Pure: time and waiting come from ports, I/O from the provider and tools.
import {
  invalidTurnInput,
  validateInputItems,
  DEFAULT_INPUT_LIMITS,
  type InputLimits,
  type Message,
  type ToolCallPart,
} from "../domain/conversation.js";
import type { TurnCheckpoint } from "../domain/inputs.js";
import { reasoningDelta, textDelta, type TurnEvent } from "../domain/turn-events.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import { addUsage, ZERO_USAGE, type UsageTotals } from "../domain/usage.js";
import type { TurnCheckpointHost } from "../ports/checkpoint-host.js";
import type { TurnEventSink } from "../ports/event-sink.js";
import type { ModelCallOptions, ModelProvider } from "../ports/model-provider.js";
import type { Sleep } from "../ports/sleep.js";
import type { BudgetGuard } from "../ports/budget-guard.js";
import type { ToolDefinition, ToolExecutor } from "../ports/tool-executor.js";
import { ABORTED, errorMessage, TurnCancellation } from "./abort.js";
import { ContextKeeper } from "./context-keeper.js";
import {
  recoverModelCall,
  withCallIds,
  type ModelCallContext,
  type ModelCallOutcome,
} from "./model-call.js";
import { guardStop, turnTokenStop, turnBudgetReached } from "./budget-stops.js";
import { consumeModelCall } from "./reconcile.js";
import { nativeTarget, ProviderView } from "./provider-view.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";
import { dispatchToolCalls, type ToolCallRecord } from "./tool-dispatch.js";
import { admitAtCheckpoint, controlOutcome } from "./turn-steps.js";
import type {
  TurnEngine,
  TurnEngineOptions,
  TurnProgress,
  TurnRequest,
  TurnResult,
} from "./turn-contract.js";

export type { TurnEngine, TurnEngineOptions, TurnProgress, TurnRequest, TurnResult };

interface EngineConfig extends Pick<TurnEngineOptions, "contextPolicy"> {
  provider: ModelProvider;
  tools: ToolExecutor | undefined;
  checkpoints: TurnCheckpointHost | undefined;
  sleep: Sleep;
  random: () => number;
  model: ModelCallOptions;
  systemPrompt: string | undefined;
  maxIterations: number;
  maxTurnTokens: number | undefined;
  budgetGuard: BudgetGuard | undefined;
  toolTimeoutMs: number;
  retry: RetryPolicy;
  limits: InputLimits;
  definitions: readonly ToolDefinition[];
  knownTools: ReadonlySet<string>;
  checkAnswer: ((text: string) => string | undefined) | undefined;
}

const NEVER_ABORTED = new AbortController().signal;
const NO_SINK: TurnEventSink = { emit: () => undefined };
const CANCELLED: TurnOutcome = { kind: "stopped", reason: "cancelled" };

export function createTurnEngine(options: TurnEngineOptions): TurnEngine {
  const definitions = options.tools?.definitions() ?? [];
  const config: EngineConfig = {
    provider: options.provider,
    tools: options.tools,
    checkpoints: options.checkpoints,
    sleep: options.sleep,
    random: options.random ?? Math.random,
    model: options.model ?? {},
    systemPrompt: options.systemPrompt,
    maxIterations: options.maxIterations ?? 25,
    maxTurnTokens: options.maxTurnTokens,
    budgetGuard: options.budgetGuard,
    toolTimeoutMs: options.toolTimeoutMs ?? 120_000,
    retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    limits: options.inputLimits ?? DEFAULT_INPUT_LIMITS,
    definitions,
    knownTools: new Set(definitions.map((d) => d.name)),
    checkAnswer: options.checkAnswer,
    contextPolicy: options.contextPolicy,
  };
  return {
    runTurn: (request) => {
      // A resumed turn's input was checked when it first ran.
      const violations = request.resume ? [] : validateInputItems(request.input, config.limits);
      if (violations.length > 0) return Promise.reject(invalidTurnInput(violations));
      return new TurnRun(config, request).run();
    },
  };
}

/** One turn's state; a class rather than closures so a turn allocates little beyond its data. */
class TurnRun implements ModelCallContext {
  readonly provider: ModelProvider;
  readonly retry: RetryPolicy;
  readonly random: () => number;
  readonly sleep: Sleep;
  private readonly cancellation: TurnCancellation;
  private readonly sink: TurnEventSink;
  private readonly view: ProviderView;
  private readonly maxIterations: number;
  private readonly maxTurnTokens: number | undefined;
  private readonly messages: Message[] = [];
  private readonly toolCalls: ToolCallRecord[] = [];
  /** The turn's usage so far; not private: a compaction's summary call counts into it too. */
  total: UsageTotals = ZERO_USAGE;
  private iterations = 0;
  private assistantText = "";

  constructor(
    private readonly config: EngineConfig,
    private readonly request: TurnRequest,
  ) {
    this.provider = config.provider;
    this.retry = config.retry;
    this.random = config.random;
    this.sleep = config.sleep;
    this.cancellation = new TurnCancellation(request.signal ?? NEVER_ABORTED);
    this.sink = request.sink ?? NO_SINK;
    this.view = new ProviderView(
      config.provider.capabilities,
      config.systemPrompt,
      request.history ?? [],
      nativeTarget(config.provider, config.model),
    );
    this.maxIterations = request.maxIterations ?? config.maxIterations;
    this.maxTurnTokens = request.maxTurnTokens ?? config.maxTurnTokens;
  }

  async run(): Promise<TurnResult> {
    const resume = this.request.resume;
    if (resume) {
      for (const m of resume.messages) this.append(m);
      this.toolCalls.push(...resume.toolCalls);
      this.total = resume.usage;
      this.iterations = resume.iterations;
      this.assistantText = resume.assistantText;
    } else {
      const inputIds = this.request.inputIds ?? [];
      this.append({
        role: "user",
        content: [...this.request.input],
        ...(inputIds.length > 0 && { inputIds: [...inputIds] }),
      });
    }
    let outcome: TurnOutcome;
    try {
      outcome = (resume && (await this.continueBatch(resume.batch))) || (await this.loop());
    } catch (err) {
      outcome = this.cancellation.aborted
        ? CANCELLED
        : { kind: "failed", reason: "internal", message: errorMessage(err) };
    } finally {
      this.cancellation.dispose();
    }
    const emitted = this.emit({ type: "terminal", outcome });
    if (emitted !== undefined) await emitted;
    return {
      turnId: this.request.turnId,
      outcome,
      messages: this.messages,
      assistantText: this.assistantText,
      toolCalls: this.toolCalls,
      usage: this.total,
      iterations: this.iterations,
    };
  }

  /** The sink's promise only when it returns one: a synchronous sink costs no extra tick. */
  emit(event: TurnEvent): void | Promise<void> {
    return this.sink.emit(event);
  }

  forwardText(text: string): void | Promise<void> {
    return this.sink.emit(textDelta(text));
  }

  forwardReasoning(text: string): void | Promise<void> {
    return this.sink.emit(reasoningDelta(text));
  }

  append(message: Message): void {
    this.messages.push(message);
    this.view.append(message);
  }

  private async loop(keeper = new ContextKeeper(this.config)): Promise<TurnOutcome> {
    const signal = this.cancellation.signal;
    for (;;) {
      if (signal.aborted) return CANCELLED;
      if (this.iterations >= this.maxIterations) {
        return { kind: "stopped", reason: "max_iterations", iterations: this.iterations };
      }
      const spentBefore = turnTokenStop(this.total, this.maxTurnTokens);
      if (spentBefore) return this.budgetStop(spentBefore);
      const denied = await guardStop(this.config.budgetGuard, this.total, this.maxTurnTokens, (e) =>
        this.emit(e),
      );
      if (denied) return denied;
      const compaction = await keeper.beforeCall(this.view, this, signal);
      if (compaction !== undefined) return compaction;
      const iteration = ++this.iterations;
      const called = await this.callModel(iteration);
      if (called.kind !== "ok") {
        // Keep what the client already saw, so the stored history matches the stream.
        if (called.forwardedText !== "") {
          this.assistantText = called.forwardedText;
          this.append({ role: "assistant", parts: [{ type: "text", text: called.forwardedText }] });
        }
        return called.kind === "cancelled" ? CANCELLED : called.outcome;
      }
      const response = called.response;
      this.total = addUsage(this.total, response.usage);
      // Charged before anything else: the call's tokens are spent whatever the turn does next.
      const charged = this.config.budgetGuard?.afterModelCall(response.usage, this.total);
      if (charged !== undefined) await charged;
      const emitted = this.emit({
        type: "usage",
        iteration,
        usage: response.usage,
        total: this.total,
      });
      if (emitted !== undefined) await emitted;
      this.append({ role: "assistant", parts: response.parts });
      this.assistantText = response.text;

      const calls: ToolCallPart[] = [];
      for (const p of response.parts) if (p.type === "tool_call") calls.push(p);
      // The budget is checked after every model call: a call that reaches it ends the turn here,
      // before its tools run. Its answer stays (the client saw it stream); each call it asked
      // for gets an error result, so the stored transcript stays valid for strict providers.
      const spent = turnTokenStop(this.total, this.maxTurnTokens);
      if (spent) {
        this.answerUnrun(calls, "the turn's token budget is spent");
        return this.budgetStop(spent);
      }
      if (response.truncated) {
        await this.emit({ type: "output_truncated", iteration });
        // The last call's arguments may be cut mid-way: none of the batch runs.
        const cut = calls.at(-1);
        if (cut !== undefined) {
          this.answerUnrun(calls, "the model's output was cut at its token limit");
          return {
            kind: "stopped",
            reason: "output_truncated",
            toolName: cut.toolName,
            callId: cut.callId,
          };
        }
      }
      if (calls.length === 0) {
        const admitted =
          this.config.checkpoints === undefined ? 0 : await this.admit("before_completion");
        if (admitted === ABORTED) return CANCELLED;
        if (admitted > 0) continue;
        const mismatch = this.config.checkAnswer?.(response.text);
        if (mismatch !== undefined) {
          const cut = response.truncated ? " (cut at the output token limit)" : "";
          return { kind: "failed", reason: "response_format_mismatch", message: mismatch + cut };
        }
        await this.emit({ type: "final_value", text: response.text });
        return {
          kind: "finished",
          reason: "assistant_message",
          text: response.text,
          ...(response.truncated && { truncated: true }),
        };
      }

      const outcome = await this.runTools(calls);
      if (outcome !== undefined) return outcome;
      if (this.config.checkpoints !== undefined && (await this.admit("after_work")) === ABORTED) {
        return CANCELLED;
      }
    }
  }

  /** One model call over the current view, streamed to the sink as it arrives. */
  private async callModel(iteration: number): Promise<ModelCallOutcome> {
    const signal = this.cancellation.signal;
    const request = {
      messages: this.view.messages,
      tools: this.config.definitions,
      options: this.config.model,
      signal,
    };
    const progress = { forwardedText: "" };
    try {
      const response = await consumeModelCall(this.provider.call(request), this, progress);
      return signal.aborted
        ? { kind: "cancelled", forwardedText: progress.forwardedText }
        : { kind: "ok", response: withCallIds(response, iteration) };
    } catch (err) {
      return await recoverModelCall(this, request, iteration, err, progress.forwardedText);
    }
  }

  /** The open batch of a resumed turn, then its after-work checkpoint; an outcome ends the turn. */
  private async continueBatch(batch: ToolCallPart[]): Promise<TurnOutcome | undefined> {
    const outcome = await this.runTools(batch);
    if (outcome !== undefined) return outcome;
    if (this.config.checkpoints !== undefined && (await this.admit("after_work")) === ABORTED) {
      return CANCELLED;
    }
    return undefined;
  }

  /** A turn token cap stop, announced as the turn's budget_reached first. */
  private async budgetStop(stop: TurnOutcome): Promise<TurnOutcome> {
    if (stop.reason === "budget_exhausted") await this.emit(turnBudgetReached(stop));
    return stop;
  }

  /** Error results for calls the turn will not run, so the transcript pairs every call. */
  private answerUnrun(calls: readonly ToolCallPart[], why: string): void {
    for (const call of calls) {
      this.append({
        role: "tool",
        callId: call.callId,
        toolName: call.toolName,
        content: `not run: ${why}`,
        isError: true,
      });
    }
  }

  /** Runs one batch; an outcome when the batch ends the turn (control or cancellation). */
  private async runTools(calls: ToolCallPart[]): Promise<TurnOutcome | undefined> {
    this.request.onToolBatch?.({
      messages: [...this.messages],
      toolCalls: [...this.toolCalls],
      usage: this.total,
      iterations: this.iterations,
      assistantText: this.assistantText,
      batch: calls,
    });
    const records = await dispatchToolCalls(calls, {
      executor: this.config.tools,
      knownTools: this.config.knownTools,
      turnId: this.request.turnId,
      cancellation: this.cancellation,
      sleep: this.sleep,
      timeoutMs: this.config.toolTimeoutMs,
      events: this,
    });
    for (const r of records) {
      this.toolCalls.push(r);
      this.append({
        role: "tool",
        callId: r.callId,
        toolName: r.toolName,
        content: r.content,
        isError: r.status !== "ok",
      });
    }
    if (this.cancellation.aborted) return CANCELLED;
    return controlOutcome(records, this);
  }

  /** Appends admitted input as user messages; how many, or ABORTED when cancelled meanwhile. */
  private admit(checkpoint: TurnCheckpoint): Promise<number | typeof ABORTED> {
    return admitAtCheckpoint(this.config.checkpoints, this.cancellation, this, {
      turnId: this.request.turnId,
      checkpoint,
      iteration: this.iterations,
    });
  }
}
