// Runs one turn under a held lease: load the committed head, run the engine with checkpoints that
// admit steers and earliest-safe-boundary work, then commit everything the turn consumed in one
// atomic step and announce the outcome with the new head revision.
import { createHash } from "node:crypto";
import type { InputItem, Message } from "../domain/conversation.js";
import { isTetherError } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import { inputClaimCompletion, type TurnInputClaim } from "../domain/inputs.js";
import type { LeaseFence } from "../domain/lease.js";
import { queueClaimCompletion, type QueuedWorkClaim } from "../domain/queue.js";
import type { TurnOutcome } from "../domain/turn-outcome.js";
import type { UsageTotals } from "../domain/usage.js";
import { createTurnEngine } from "../engine/index.js";
import type { CheckpointAdmission, TurnCheckpointHost } from "../ports/checkpoint-host.js";
import { combineExecutors, createClientToolBridge } from "./client-tools.js";
import type { RuntimeDeps } from "./deps.js";
import { createEventWriter } from "./event-writer.js";
import { decodeInputPayload, type TurnSettings } from "./input-payload.js";
import { encodeMessage } from "./message-codec.js";
import { createTurnEventMapper } from "./turn-event-mapper.js";

export interface TurnWork {
  fence: LeaseFence;
  inputs: TurnInputClaim | undefined;
  work: QueuedWorkClaim | undefined;
  /** Aborted when the lease is lost or the replica stops. */
  signal: AbortSignal;
  /** Aborted when the replica starts draining: a turn waiting for a client hands over. */
  drain?: AbortSignal;
}

/**
 * The replica is draining and the turn waits for a client's tool answer, which may take longer
 * than the drain: it stops uncommitted, and a successor re-runs it under the same turn id.
 */
export class TurnHandedOver extends Error {
  constructor() {
    super("the turn was handed over: the replica is draining and the turn waits for a client");
  }
}

/** The turn could not commit because this replica no longer holds the session. */
export class LeaseLostError extends Error {
  constructor(cause: unknown) {
    super("the session lease was lost before the turn committed", { cause });
  }
}

const COMMIT_ATTEMPTS = 5;
/** How much longer the engine's tool timeout is than a client call's deadline. */
const CLIENT_DEADLINE_GRACE_MS = 5_000;

/**
 * A turn's id follows from what it consumes, so a re-run after a crash (a successor re-claiming
 * the same inputs) is the same turn: tool idempotency keys and steer targets stay valid.
 */
export function stableTurnId(sessionId: SessionId, job: Pick<TurnWork, "inputs" | "work">): string {
  const consumed = [
    ...(job.inputs?.inputs ?? []).map((i) => `i:${i.inputId}`),
    ...(job.work?.batches ?? []).map((b) => `w:${b.batchId}`),
  ].sort();
  const digest = createHash("sha256")
    .update(`${sessionId}\n${consumed.join("\n")}`)
    .digest("hex");
  return `turn-${digest.slice(0, 24)}`;
}

export async function executeTurn(deps: RuntimeDeps, job: TurnWork): Promise<TurnOutcome> {
  const { store, signals } = deps;
  const sessionId = job.fence.sessionId;
  const turnId = stableTurnId(sessionId, job);
  const { snapshot, history } = await deps.transcripts.load(sessionId);

  const payloads = (job.inputs?.inputs ?? []).map((i) => decodeInputPayload(i.payload));
  const items: InputItem[] = [
    ...payloads.flatMap((p) => p.items),
    ...(job.work?.batches ?? []).map((b): InputItem => ({ type: "text", text: b.payload })),
  ];
  const settings: TurnSettings = { ...deps.defaults, ...payloads[0]?.settings };
  const cancel = new AbortController();
  let handedOver = false;
  const handOverIfWaiting = (): void => {
    if (handedOver || !job.drain?.aborted || clientTools.waiting() === 0) return;
    handedOver = true;
    cancel.abort(new TurnHandedOver());
  };
  const clientTools = createClientToolBridge({
    definitions: payloads.flatMap((p) => p.clientTools),
    store,
    fence: job.fence,
    turnId,
    timeoutMs: deps.clientToolTimeoutMs,
    onWait: handOverIfWaiting,
  });
  const clientToolNames = new Set(clientTools.definitions().map((d) => d.name));

  const writer = createEventWriter({
    log: deps.log,
    bus: deps.bus,
    sessionId,
    turnId,
    fence: job.fence,
    lastSeq: await deps.log.lastSeq(sessionId),
    // A turn whose events no longer reach the log will not commit (see below): stop its model
    // and tool calls now rather than spend them.
    onFailure: (error) => cancel.abort(error),
  });
  const inputClaims: TurnInputClaim[] = job.inputs ? [job.inputs] : [];
  const workClaims: QueuedWorkClaim[] = job.work ? [job.work] : [];

  const abortTurn = (): void => cancel.abort(new Error("turn cancelled"));
  job.signal.addEventListener("abort", abortTurn, { once: true });
  job.drain?.addEventListener("abort", handOverIfWaiting, { once: true });
  await signals.setActiveTurn(sessionId, turnId, deps.leaseTtlMs);
  const stopListening = await signals.listen(sessionId, turnId, {
    onCancel: abortTurn,
    onToolResult: (result) => clientTools.deliver(result),
  });

  try {
    await writer.emit({
      type: "turn_started",
      inputIds: inputClaims.flatMap((c) => c.inputs.map((i) => i.inputId)),
      turnIndex: (snapshot?.turnIndex ?? 0) + 1,
    });
    const checkpoints: TurnCheckpointHost = {
      async checkpoint(request) {
        const admissions: CheckpointAdmission[] = [];
        const steers = await store.claimInputs(
          job.fence,
          { kind: "checkpoint", turnId, checkpoint: request.checkpoint },
          16,
        );
        if (steers) {
          inputClaims.push(steers);
          for (const input of steers.inputs) {
            admissions.push({
              source: { kind: "steer", id: input.inputId },
              items: decodeInputPayload(input.payload).items,
            });
          }
        }
        if (request.checkpoint === "after_work") {
          const work = await store.claimReadyWork(job.fence, "active_turn_checkpoint", 16);
          if (work) {
            workClaims.push(work);
            for (const batch of work.batches) {
              admissions.push({
                source: { kind: "queued_work", id: batch.batchId },
                items: [{ type: "text", text: batch.payload }],
              });
            }
          }
        }
        return admissions;
      },
    };
    const engine = createTurnEngine({
      provider: deps.provider,
      tools: combineExecutors(deps.serverTools, clientTools),
      checkpoints,
      sleep: deps.sleep,
      model: {
        ...(settings.model !== undefined && { model: settings.model }),
        ...(settings.temperature !== undefined && { temperature: settings.temperature }),
        ...(settings.maxOutputTokens !== undefined && {
          maxOutputTokens: settings.maxOutputTokens,
        }),
      },
      ...(settings.systemPrompt !== undefined && { systemPrompt: settings.systemPrompt }),
      ...(settings.maxIterations !== undefined && { maxIterations: settings.maxIterations }),
      ...(settings.tokenBudget !== undefined && { tokenBudget: settings.tokenBudget }),
      // The client tool bridge owns client calls' deadlines (it closes them in the store); the
      // engine's timeout is a backstop behind it.
      toolTimeoutMs: deps.clientToolTimeoutMs + CLIENT_DEADLINE_GRACE_MS,
    });
    const sink = createTurnEventMapper(writer, {
      sessionId,
      turnId,
      clientToolNames,
      clientToolTimeoutMs: deps.clientToolTimeoutMs,
      clock: deps.clock,
      beforeClientCall: (callId) => clientTools.record(callId),
      onRetry: (e) =>
        deps.logger.warn(
          {
            sessionId,
            turnId,
            iteration: e.iteration,
            attempt: e.attempt,
            delayMs: e.delayMs,
            status: e.status,
            cause: e.message,
          },
          "model call failed; retrying",
        ),
    });
    const result = await engine.runTurn({
      turnId,
      history,
      input: items,
      signal: cancel.signal,
      sink,
    });
    if (handedOver) throw new TurnHandedOver();
    if (job.signal.aborted) throw new LeaseLostError(job.signal.reason);
    // Answers after this are for a turn that stopped waiting: the store reports them ignored.
    await clientTools.closeAll();
    // Every event of the turn must be in the log before it commits. A write that failed (Redis
    // dropped, the lease lapsed) surfaces here; the engine may have taken it for a model failure
    // and ended the turn short, so committing now would store a cut-off turn. Not committing
    // leaves the claims for the next drive, which runs the turn again under the same id.
    await writer.flush();

    await store.deferActiveInputs(job.fence, turnId);
    const headRevision = await commitTurn(deps, job.fence, snapshot?.headRevision ?? 0, {
      turnId,
      messages: result.messages,
      usage: result.usage,
      inputClaims,
      workClaims,
    });
    await writer.emit({
      type: "turn_completed",
      outcome: result.outcome,
      headRevision,
      usage: result.usage,
      fencingToken: job.fence.fencingToken,
    });
    await writer.flush();
    deps.metrics?.countTurn(result.outcome.kind);
    const provider = deps.provider.name;
    deps.metrics?.addProviderTokens(provider, "input", result.usage.inputTokens);
    deps.metrics?.addProviderTokens(provider, "output", result.usage.outputTokens);
    deps.metrics?.addProviderTokens(provider, "cache_read", result.usage.cacheReadTokens);
    deps.metrics?.addProviderTokens(provider, "cache_write", result.usage.cacheWriteTokens);
    deps.metrics?.addProviderTokens(provider, "reasoning", result.usage.reasoningTokens);
    deps.logger.info(
      {
        sessionId,
        turnId,
        outcome: result.outcome.kind,
        reason: result.outcome.reason,
        headRevision,
        fencingToken: job.fence.fencingToken,
      },
      "turn committed",
    );
    if (result.outcome.kind === "failed" && result.outcome.reason === "provider_error") {
      const { status, attempts, message } = result.outcome;
      deps.logger.error(
        { sessionId, turnId, status, attempts, cause: message },
        "model call failed",
      );
    }
    return result.outcome;
  } finally {
    job.signal.removeEventListener("abort", abortTurn);
    job.drain?.removeEventListener("abort", handOverIfWaiting);
    await stopListening();
    await signals.setActiveTurn(sessionId, undefined, 0).catch(() => undefined);
  }
}

interface TurnRecord {
  turnId: string;
  messages: Message[];
  usage: UsageTotals;
  inputClaims: TurnInputClaim[];
  workClaims: QueuedWorkClaim[];
}

/** Commits through the head CAS; a concurrent metadata commit only moves the head, so retry. */
async function commitTurn(
  deps: RuntimeDeps,
  fence: LeaseFence,
  readHead: number,
  turn: TurnRecord,
): Promise<number> {
  const appendMessages = turn.messages.map(encodeMessage);
  const contentHash = createHash("sha256").update(appendMessages.join("\n")).digest("hex");
  let expected = readHead;
  for (let attempt = 1; ; attempt++) {
    try {
      const receipt = await deps.store.commit({
        sessionId: fence.sessionId,
        expectedHeadRevision: expected,
        appendMessages,
        usage: turn.usage,
        advanceTurn: true,
        stamp: { operationId: `turn:${turn.turnId}`, contentHash },
        completeInputClaims: turn.inputClaims.map(inputClaimCompletion),
        completeQueueClaims: turn.workClaims.map(queueClaimCompletion),
      });
      return receipt.headRevision;
    } catch (error) {
      if (isTetherError(error, "head_revision_conflict") && attempt < COMMIT_ATTEMPTS) {
        expected = (await deps.store.loadSession(fence.sessionId))?.headRevision ?? 0;
        continue;
      }
      if (
        isTetherError(error, "queued_work_claim_superseded") ||
        isTetherError(error, "turn_input_claim_superseded")
      ) {
        throw new LeaseLostError(error);
      }
      throw error;
    }
  }
}
