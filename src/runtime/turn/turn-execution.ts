// Runs one turn under a held lease: load the committed head, run the engine with checkpoints that
// admit steers and earliest-safe-boundary work, then commit everything the turn consumed in one
// atomic step and announce the outcome with the new head revision.
import type { InputItem } from "../../domain/conversation.js";
import type { TurnCheckpoint, TurnInputClaim } from "../../domain/inputs.js";
import type { LeaseFence } from "../../domain/lease.js";
import { splitWaits, type ParkReceipt, type ResumeOutcome } from "../../domain/parked-turns.js";
import type { QueuedWorkClaim } from "../../domain/queue.js";
import { toolIdempotencyKey } from "../../domain/tool-calls.js";
import type { TurnEvent } from "../../domain/turn-events.js";
import type { TurnOutcome } from "../../domain/turn-outcome.js";
import { createTurnEngine } from "../../engine/index.js";
import type { CheckpointAdmission, TurnCheckpointHost } from "../../ports/checkpoint-host.js";
import { combineExecutors, createClientToolBridge, joinExecutors } from "./client-tools.js";
import type { RuntimeDeps } from "../deps.js";
import { createEventWriter } from "../stream/index.js";
import { decodeInputPayload, type TurnSettings } from "./input-payload.js";
import { overlayTools, pinnedDefaults } from "./agent-definition.js";
import { endParkedTurn } from "./parked-resume.js";
import { stableTurnId } from "./turn-id.js";
import { responseMismatch } from "./response-format.js";
import { approvalPolicy, withApprovals } from "./tool-approval.js";
import { commitTurn, LeaseLostError, reportCommitted, UnannouncedCommit } from "./turn-commit.js";
import { createTurnEventMapper } from "../stream/index.js";
import {
  createParkingMonitor,
  decodeProgress,
  encodeProgress,
  TurnParked,
} from "./turn-parking.js";

export { LeaseLostError } from "./turn-commit.js";
export { TurnParked } from "./turn-parking.js";

export interface TurnWork {
  fence: LeaseFence;
  inputs: TurnInputClaim | undefined;
  work: QueuedWorkClaim | undefined;
  /** Aborted when the lease is lost or the replica stops. */
  signal: AbortSignal;
  /** Aborted when the replica starts draining: a turn waiting for a client parks at once. */
  drain?: AbortSignal;
  /** A parked turn this holder resumes (its claims are `inputs` and `work`). */
  resumed?: Exclude<ResumeOutcome, { status: "waiting" }>;
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

/** How much longer the engine's tool timeout is than a client call's deadline. */
const CLIENT_DEADLINE_GRACE_MS = 5_000;

export async function executeTurn(deps: RuntimeDeps, job: TurnWork): Promise<TurnOutcome> {
  const { store, signals } = deps;
  const sessionId = job.fence.sessionId;
  const resumed = job.resumed;
  const saved = resumed ? decodeProgress(resumed.parked.progress) : undefined;
  const turnId = resumed?.parked.turnId ?? stableTurnId(sessionId, job);
  // Where the log ends is not read: the writer learns it from the turn's first event, which the
  // turn awaits before anything else is emitted.
  const { snapshot, history } = await deps.transcripts.load(sessionId);

  const payloads = saved
    ? []
    : (job.inputs?.inputs ?? []).map((i) => decodeInputPayload(i.payload));
  const items: InputItem[] = [
    ...payloads.flatMap((p) => p.items),
    ...(saved ? [] : (job.work?.batches ?? [])).map((b): InputItem => ({
      type: "text",
      text: b.payload,
    })),
  ];
  // A session bound to an agent runs with the pinned definition under the turn's own options (a
  // resumed turn saved the result when it first ran).
  const agent = saved ? undefined : await pinnedDefaults(deps, snapshot?.metadata);
  const settings: TurnSettings = saved?.settings ?? {
    ...deps.defaults,
    ...agent?.settings,
    ...payloads[0]?.settings,
  };
  const clientDefinitions =
    saved?.clientTools ??
    overlayTools(
      agent?.clientTools ?? [],
      payloads.flatMap((p) => p.clientTools),
    );
  // Tool servers' tools the turn selected, as they are now (a server that is down is named).
  const selected = deps.selectableTools?.forTurn(settings.serverTools ?? [], (callId) =>
    toolIdempotencyKey(sessionId, turnId, callId),
  );
  const cancel = new AbortController();
  let handedOver = false;
  let parkedReceipt: ParkReceipt | undefined;
  const handOverIfWaiting = (): void => {
    if (handedOver || parkedReceipt || !job.drain?.aborted || clientTools.waiting() === 0) return;
    // A draining replica parks a waiting turn at once; one that cannot park hands it over.
    if (parking.parkNowIfWaiting()) return;
    handedOver = true;
    cancel.abort(new TurnHandedOver());
  };
  const clientTools = createClientToolBridge({
    definitions: clientDefinitions,
    store,
    fence: job.fence,
    turnId,
    timeoutMs: deps.clientToolTimeoutMs,
    onWait: () => {
      parking.check();
      handOverIfWaiting();
    },
  });
  const clientToolNames = new Set(clientTools.definitions().map((d) => d.name));
  const recordedStates = resumed ? await store.readToolCalls(sessionId, turnId) : [];
  clientTools.preload(recordedStates);

  const writer = createEventWriter({
    log: deps.log,
    bus: deps.bus,
    sessionId,
    turnId,
    fence: job.fence,
    // A turn whose events no longer reach the log will not commit (see below): stop its model
    // and tool calls now rather than spend them.
    onFailure: (error) => cancel.abort(error),
  });
  const inputClaims: TurnInputClaim[] = job.inputs ? [job.inputs] : [];
  const workClaims: QueuedWorkClaim[] = job.work ? [job.work] : [];
  const needsApproval = approvalPolicy(
    clientDefinitions,
    settings.approvalRequiredTools,
    deps.approvalRequiredTools,
  );
  const mapper = createTurnEventMapper(writer, {
    sessionId,
    turnId,
    clientToolNames,
    clientToolTimeoutMs: deps.clientToolTimeoutMs,
    clock: deps.clock,
    beforeClientCall: (waitId) => clientTools.record(waitId),
    needsApproval,
    ...(deps.selectableTools && {
      serverOf: (name: string) => deps.selectableTools?.serverOf(name),
    }),
    shown: saved?.shown ?? [],
    onRetry: (e) =>
      deps.logger.warn(
        {
          sessionId,
          turnId,
          iteration: e.iteration,
          attempt: e.attempt,
          delayMs: e.delayMs,
          status: e.status,
          cause: e.reason,
        },
        "model call failed; retrying",
      ),
  });

  /** False when the turn cannot park: its progress is larger than the store takes. */
  const parkTurn = (): boolean => {
    const state = parking.snapshot();
    const waitingOn = clientTools.waitingIds();
    if (!state) return false;
    const progress = encodeProgress({
      v: 1,
      engine: state.engine,
      settled: state.settled,
      shown: mapper.shownKeys(),
      settings,
      clientTools: clientDefinitions,
    });
    if (Buffer.byteLength(progress, "utf8") > deps.parking.maxProgressBytes) {
      deps.logger.warn(
        { sessionId, turnId, bytes: Buffer.byteLength(progress, "utf8") },
        "turn too large to park: it waits on this replica",
      );
      return false;
    }
    void storeParkedTurn(progress, waitingOn);
    return true;
  };
  const storeParkedTurn = async (progress: string, waitingOn: string[]): Promise<void> => {
    try {
      const expiresAtMs = deps.clock.nowMs() + deps.parking.ttlMs;
      await writer.emit({ type: "turn_parked", ...splitWaits(waitingOn), expiresAtMs });
      await writer.flush();
      parkedReceipt = await store.parkTurn(job.fence, {
        turnId,
        waitingOn,
        progress,
        inputIds: inputClaims.flatMap((c) => c.inputs.map((i) => i.inputId)),
        batchIds: workClaims.flatMap((c) => c.batches.map((b) => b.batchId)),
        ttlMs: deps.parking.ttlMs,
      });
      cancel.abort(new TurnParked(parkedReceipt));
    } catch (error) {
      // Not parked (the lease or a claim is gone, the store is away, the progress too large):
      // the turn stops uncommitted and the next holder runs it again under the same id.
      cancel.abort(new LeaseLostError(error));
    }
  };
  const parking = createParkingMonitor({
    parkAfterMs: deps.parking.afterMs,
    outsideWaits: () => clientTools.waiting(),
    park: parkTurn,
    ...(saved && { settled: saved.settled }),
  });
  // Once parked, the engine's unwinding (cancelled calls, the terminal event) is not the turn's.
  // A store call the turn depends on that fails (an event, a call record, a checkpoint's claims)
  // stops the turn short, uncommitted: it is run again or resumed, never committed cut off.
  const stopShort = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error: unknown) => {
      cancel.abort(new LeaseLostError(error));
      throw error;
    });
  const sink = {
    emit: (event: TurnEvent) =>
      parking.parking() ? Promise.resolve() : stopShort(mapper.emit(event)),
  };

  const abortTurn = (): void => cancel.abort(new Error("turn cancelled"));
  // A cancel that reaches the turn while it parks would be lost with the park (the client was
  // told it took): the parked turn is cancelled in the store, and resumed at once to end.
  let cancelRequested = false;
  const cancelWhileParking = async (receipt: ParkReceipt): Promise<ParkReceipt> => {
    if (!cancelRequested) return receipt;
    await store.cancelParkedTurn(sessionId, turnId).catch(() => false);
    return { ...receipt, resumable: true };
  };
  job.signal.addEventListener("abort", abortTurn, { once: true });
  job.drain?.addEventListener("abort", handOverIfWaiting, { once: true });
  // The listener marks the turn running (a cancel needs the marker); whatever reached the turn
  // before its listener heard it is stored, which listen reads in the same step.
  const stopListening = await signals.listen(
    sessionId,
    turnId,
    {
      onCancel: () => {
        cancelRequested = true;
        abortTurn();
      },
      onToolResult: (result) => clientTools.deliver(result),
    },
    deps.leaseTtlMs,
  );

  try {
    await writer.emit(
      resumed
        ? { type: "turn_resumed", reason: resumed.status }
        : {
            type: "turn_started",
            inputIds: inputClaims.flatMap((c) => c.inputs.map((i) => i.inputId)),
            turnIndex: (snapshot?.turnIndex ?? 0) + 1,
            unavailableServers: selected?.unavailable ?? [],
          },
    );
    /** Steers for this turn and earliest-safe-boundary work, claimed at a checkpoint. */
    const admitAt = async (checkpoint: TurnCheckpoint): Promise<CheckpointAdmission[]> => {
      const admissions: CheckpointAdmission[] = [];
      const steers = await store.claimInputs(
        job.fence,
        { kind: "checkpoint", turnId, checkpoint },
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
      if (checkpoint === "after_work") {
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
    };
    const checkpoints: TurnCheckpointHost = {
      checkpoint: (request) => stopShort(admitAt(request.checkpoint)),
    };
    const server = joinExecutors(deps.serverTools, selected?.executor);
    const tools = withApprovals(combineExecutors(server, clientTools), {
      needsApproval,
      waits: clientTools,
      announceRun: (callId, toolName) => stopShort(mapper.announceRun(callId, toolName)),
      timeoutMs: deps.clientToolTimeoutMs,
    });
    const responseFormat = settings.responseFormat;
    const engine = createTurnEngine({
      provider: deps.provider,
      tools: parking.wrap(tools),
      checkpoints,
      sleep: deps.sleep,
      model: {
        ...(settings.model !== undefined && { model: settings.model }),
        ...(settings.temperature !== undefined && { temperature: settings.temperature }),
        ...(settings.maxOutputTokens !== undefined && {
          maxOutputTokens: settings.maxOutputTokens,
        }),
        ...(responseFormat && { responseFormat }),
      },
      ...(responseFormat && {
        checkAnswer: (text: string) => responseMismatch(responseFormat, text),
      }),
      ...(settings.systemPrompt !== undefined && { systemPrompt: settings.systemPrompt }),
      ...(settings.maxIterations !== undefined && { maxIterations: settings.maxIterations }),
      ...(settings.tokenBudget !== undefined && { tokenBudget: settings.tokenBudget }),
      // The client tool bridge owns client calls' deadlines (it closes them in the store); the
      // engine's timeout is a backstop behind it.
      toolTimeoutMs: deps.clientToolTimeoutMs + CLIENT_DEADLINE_GRACE_MS,
    });
    const result =
      resumed && saved && resumed.status !== "answered"
        ? await endParkedTurn(saved, resumed.status, recordedStates, sink)
        : await engine.runTurn({
            turnId,
            history,
            input: items,
            signal: cancel.signal,
            sink,
            onToolBatch: (progress) => parking.onToolBatch(progress),
            ...(saved && { resume: saved.engine }),
          });
    if (parkedReceipt) throw new TurnParked(await cancelWhileParking(parkedReceipt));
    if (cancel.signal.reason instanceof LeaseLostError) throw cancel.signal.reason;
    if (handedOver) throw new TurnHandedOver();
    if (job.signal.aborted) throw new LeaseLostError(job.signal.reason);
    // Every event of the turn must be in the log before it commits. A write that failed (Redis
    // dropped, the lease lapsed) surfaces here; the engine may have taken it for a model failure
    // and ended the turn short, so committing now would store a cut-off turn. Not committing
    // leaves the claims for the next drive, which runs the turn again under the same id.
    await writer.flush();

    const headRevision = await commitTurn(deps, job.fence, snapshot?.headRevision ?? 0, {
      turnId,
      messages: result.messages,
      usage: result.usage,
      inputClaims,
      workClaims,
      ...(resumed && { parkedTurnId: turnId }),
    });
    // Answers after this are for a turn that ended: the store reports them ignored. Not before the
    // commit: a run that stops short (its events failed, its lease went) is run again, and the
    // next run must still find its calls open and the answers given to them.
    await clientTools.closeAll().catch((error: unknown) => {
      deps.logger.warn({ sessionId, turnId, error }, "tool calls not closed after the commit");
    });
    try {
      await writer.emit({
        type: "turn_completed",
        outcome: result.outcome,
        headRevision,
        usage: result.usage,
        fencingToken: job.fence.fencingToken,
      });
      await writer.flush();
    } catch (error) {
      throw new UnannouncedCommit(error);
    }
    reportCommitted(deps, sessionId, turnId, result, headRevision, job.fence.fencingToken);
    return result.outcome;
  } finally {
    parking.dispose();
    job.signal.removeEventListener("abort", abortTurn);
    job.drain?.removeEventListener("abort", handOverIfWaiting);
    await stopListening().catch(() => undefined);
  }
}
