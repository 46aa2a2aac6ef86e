// Runs one turn under a held lease, in named steps: prepare (the committed head, settings, tools),
// open (the writer, bridge, mapper and parking monitor), run the engine with checkpoints that
// admit steers and earliest-safe-boundary work, then either stop short (parked, handed over, lease
// lost) or commit everything the turn consumed in one atomic step and announce the outcome.
// executeTurn returns how the turn ended (TurnEnd); only a defect is thrown.
import { resolveContextPolicy } from "../../domain/compaction.js";
import type { TurnCheckpoint } from "../../domain/inputs.js";
import { createTurnEngine, type TurnResult } from "../../engine/index.js";
import type { CheckpointAdmission, TurnCheckpointHost } from "../../ports/checkpoint-host.js";
import type { RuntimeDeps } from "../deps.js";
import { onAbort } from "../stream/index.js";
import { combineExecutors, joinExecutors } from "./client-tools.js";
import { decodeInputs } from "./input-payload.js";
import { withModelCallMetrics } from "../observation/index.js";
import { endParkedTurn } from "./parked-resume.js";
import { responseMismatch } from "./response-format.js";
import { withApprovals } from "./tool-approval.js";
import { withQuotaCounting } from "../limits/index.js";
import { commitTurn, completionOf, publishAnnounced, reportCommitted } from "./turn-commit.js";
import { committedEnd, endOfCommitError, endOfError, type TurnEnd } from "./turn-end.js";
import {
  decodeWork,
  prepareTurn,
  turnIdOf,
  type DecodedWork,
  type TurnWork,
} from "./turn-preparation.js";
import { budgetGuardOf, costOf, withTenantCharges } from "./turn-budget.js";
import { openTurn, stoppedShort, type TurnRun } from "./turn-run.js";
import { startTurnTrace, type TurnTrace } from "./turn-trace.js";
import { turnEndEvents } from "./webhook-events.js";

/** How much longer the engine's tool timeout is than a client call's deadline. */
const CLIENT_DEADLINE_GRACE_MS = 5_000;

export function executeTurn(deps: RuntimeDeps, job: TurnWork): Promise<TurnEnd> {
  // The claims are decoded once: the trace reads the submitters, the preparation the rest.
  const decoded = decodeWork(job);
  const trace = startTurnTrace(deps, job, decoded);
  return trace.around(() => runTurn(deps, job, decoded, trace));
}

async function runTurn(
  deps: RuntimeDeps,
  job: TurnWork,
  decoded: DecodedWork,
  trace: TurnTrace,
): Promise<TurnEnd> {
  const turnId = turnIdOf(job);
  try {
    const run = openTurn(deps, job, await prepareTurn(deps, job, decoded), trace);
    const stopListening = await listen(run);
    try {
      const result = await runEngine(run);
      return (await stoppedShort(run)) ?? (await finishTurn(run, result));
    } finally {
      run.parking.dispose();
      await stopListening();
    }
  } catch (error) {
    return endOfError(turnId, error);
  }
}

/**
 * Hears what reaches the turn from outside: the lease's loss or the replica's stop (the job's
 * signal), the replica closing, CancelTurn and client tool answers. Returns the step that stops hearing.
 */
async function listen(run: TurnRun): Promise<() => Promise<void>> {
  const { deps, job, prep, stops, cancel } = run;
  const abortTurn = (): void => cancel.abort(new Error("turn cancelled"));
  const unhearStop = onAbort(job.signal, abortTurn);
  const unhearClosing = job.closing ? onAbort(job.closing, run.handOverIfWaiting) : undefined;
  const unhear = (): void => {
    unhearStop();
    unhearClosing?.();
  };
  try {
    // The listener marks the turn running (a cancel needs the marker); whatever reached the turn
    // before its listener heard it is stored, which listen reads in the same step, or was kept
    // for it since the turn start marked it.
    const stopListening = await deps.signals.listen(
      prep.sessionId,
      prep.turnId,
      {
        onCancel: () => {
          stops.cancelRequested = true;
          abortTurn();
        },
        onToolResult: (answer) =>
          run.clientTools.deliver({
            kind: "result",
            callId: answer.callId,
            status: "answered",
            answer,
          }),
        onDecision: (decision) =>
          run.clientTools.deliver({
            kind: "approval",
            callId: decision.callId,
            status: "decided",
            decision,
          }),
        onSteer: () => {
          run.steers.heard = true;
        },
      },
      deps.leaseTtlMs,
      // Marked running in the turn start's step: the listener takes no step of its own (ADR 0024).
      { markedRunning: job.loaded?.markedTurnId === prep.turnId },
    );
    return async () => {
      unhear();
      await stopListening({ signalsCleared: stops.signalsCleared === true }).catch(() => undefined);
    };
  } catch (error) {
    unhear();
    throw error;
  }
}

/** Announces the turn's start (or resume) and runs the engine to its result. */
async function runEngine(run: TurnRun): Promise<TurnResult> {
  const { deps, prep, writer } = run;
  const { resumed, saved, settings } = prep;
  await writer.emit(
    resumed
      ? { type: "turn_resumed", reason: resumed.status }
      : {
          type: "turn_started",
          inputIds: prep.inputIds,
          turnIndex: (prep.snapshot?.turnIndex ?? 0) + 1,
          unavailableServers: prep.selected?.unavailable ?? [],
        },
  );
  // A parked turn that will not go on (cancelled or expired while it waited) only ends.
  if (resumed && saved && resumed.status !== "answered") {
    return endParkedTurn(prep.turnId, saved, resumed.status, prep.recordedStates, run.sink);
  }
  const checkpoints: TurnCheckpointHost = {
    checkpoint: (request) => run.stopShort(admitAt(run, request.checkpoint)),
  };
  const server = joinExecutors(deps.serverTools, prep.selected?.executor);
  const tools = withApprovals(combineExecutors(server, run.clientTools), {
    needsApproval: run.needsApproval,
    waits: run.clientTools,
    announceRun: (callId, toolName) => run.stopShort(run.mapper.announceRun(callId, toolName)),
    timeoutMs: deps.clientToolTimeoutMs,
  });
  const responseFormat = settings.responseFormat;
  const engine = createTurnEngine({
    // Metrics innermost (a call a quota holds back is timed from when it reaches the vendor), the
    // chat span around them, the quota's wait and charge outermost.
    provider: withQuotaCounting(
      deps,
      prep.sessionId,
      run.trace.provider(withModelCallMetrics(deps.provider, deps.metrics, prep.sessionId)),
      run.job.charges,
    ),
    tools: run.parking.wrap(run.trace.tools(tools, run)),
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
    ...(settings.maxTurnTokens !== undefined && { maxTurnTokens: settings.maxTurnTokens }),
    ...budgetGuardOf(run),
    contextPolicy: resolveContextPolicy(settings.contextManagement),
    // The client tool bridge owns client calls' deadlines (it closes them in the store); the
    // engine's timeout is a backstop behind it.
    toolTimeoutMs: deps.clientToolTimeoutMs + CLIENT_DEADLINE_GRACE_MS,
  });
  return engine.runTurn({
    turnId: prep.turnId,
    history: prep.history,
    input: prep.items,
    inputIds: prep.inputIds,
    signal: run.cancel.signal,
    sink: run.sink,
    onToolBatch: (progress) => run.parking.onToolBatch(progress),
    ...(saved && { resume: saved.engine }),
  });
}

/**
 * Whether no steer can be pending for the turn at its before-completion checkpoint, so its claim
 * would find nothing (ADR 0041): none could be when it started (steerHearing was given), none
 * was heard since the last claim, the replica heard every signal throughout (the same token),
 * and no client answered a call (an answer read from the store, not heard, would be a sign the
 * hearing lags). Only `before_completion` is skipped: `after_work` claims queued work too.
 */
function noSteerPending(run: TurnRun, checkpoint: TurnCheckpoint): boolean {
  const since = run.job.loaded?.steerHearing;
  return (
    checkpoint === "before_completion" &&
    since !== undefined &&
    run.job.resumed === undefined &&
    !run.steers.heard &&
    !run.clientTools.hasCalls() &&
    run.deps.signals.steerHearing?.() === since
  );
}

/** Steers for this turn and earliest-safe-boundary work, claimed at a checkpoint. */
async function admitAt(run: TurnRun, checkpoint: TurnCheckpoint): Promise<CheckpointAdmission[]> {
  const { store } = run.deps;
  const { fence } = run.job;
  const admissions: CheckpointAdmission[] = [];
  if (noSteerPending(run, checkpoint)) return admissions;
  // A steer heard from here on may be one this claim misses: the next checkpoint claims too.
  run.steers.heard = false;
  const steers = await store.claimInputs(
    fence,
    { kind: "checkpoint", turnId: run.prep.turnId, checkpoint },
    16,
  );
  if (steers) {
    run.inputClaims.push(steers);
    const decoded = decodeInputs(steers.inputs);
    run.trace.admitted(decoded);
    for (const { input, payload } of decoded) {
      admissions.push({ source: { kind: "steer", id: input.inputId }, items: payload.items });
    }
  }
  if (checkpoint === "after_work") {
    const work = await store.claimReadyWork(fence, "active_turn_checkpoint", 16);
    if (work) {
      run.workClaims.push(work);
      for (const batch of work.batches) {
        admissions.push({
          source: { kind: "queued_work", id: batch.batchId },
          items: [{ type: "text", text: batch.payload }],
        });
      }
    }
  }
  return admissions;
}

/** Commits the turn and announces its outcome with the new head revision. */
async function finishTurn(run: TurnRun, result: TurnResult): Promise<TurnEnd> {
  const { deps, job, prep, writer } = run;
  const { sessionId, turnId } = prep;
  // Every event of the turn must be in the log before it commits, or in the commit's step: a
  // store whose commit appends the announcement takes what the writer still holds with it (ADR
  // 0040); any other gets it written first. A write that failed (Redis dropped, the lease
  // lapsed) surfaces here; the engine may have taken it for a model failure and ended the turn
  // short, so committing now would store a cut-off turn. Not committing leaves the claims for
  // the next drive, which runs the turn again under the same id (held events never landed).
  const held = deps.store.announcesInCommit?.() === true ? await writer.takePending() : [];
  if (held.length === 0) await writer.flush();
  const completed = completionOf(run, result);
  let commit: Awaited<ReturnType<typeof commitTurn>>;
  try {
    commit = await commitTurn(deps, job.fence, prep.snapshot?.headRevision ?? 0, {
      turnId,
      messages: result.messages,
      usage: result.usage,
      outcome: result.outcome,
      clientTools: prep.clientTools.map((t) => t.name),
      ...costOf(run, result),
      inputClaims: run.inputClaims,
      workClaims: run.workClaims,
      ...(prep.resumed && { parkedTurnId: turnId }),
      webhookEvents: turnEndEvents(deps, sessionId, turnId, result.outcome),
      // An announcing commit closes the turn's tool calls in its step, so it may release there:
      // a client that saw turn_completed never finds the lease still held for this turn.
      completion: { event: completed, releaseIfIdle: true, held },
      // The last model call's charges and the quota slot, in the commit's step (ADR 0038).
      ...withTenantCharges(job.charges),
    });
  } catch (error) {
    // The held events never landed (or landed with the commit, whose reply was lost); none was
    // on the bus, so no watcher stands on a cursor the re-run will number again (ADR 0040).
    // Not carried: the hold's end flushes them with the separate steps (TurnCharges.settle).
    return endOfCommitError(turnId, error);
  }
  if (commit.chargesCarried) job.charges?.committed();
  const { headRevision, announced } = commit;
  if (announced?.signalsCleared) run.stops.signalsCleared = true;
  if (announced) publishAnnounced(run, announced.seq, completed(headRevision), held);
  // After the publish: a watch takes the completion before it hears that the hold ended.
  if (announced?.released) job.onReleased?.();
  run.trace.committed(headRevision);
  // Answers after this are for a turn that ended: the store reports them ignored. Not before the
  // commit: a run that stops short (its events failed, its lease went) is run again, and the
  // next run must still find its calls open and the answers given to them. An announcing
  // commit closed them in its own step; a store that took no announcement needs the call.
  await run.clientTools.closeAll(announced !== undefined).catch((error: unknown) => {
    deps.logger.warn({ sessionId, turnId, error }, "tool calls not closed after the commit");
  });
  // A store that did not announce in the commit's step (the wire's) gets it as its own append.
  if (!announced) {
    try {
      await writer.emit(completed(headRevision));
      await writer.flush();
    } catch (cause) {
      return { kind: "unannounced", turnId, headRevision, cause };
    }
  }
  reportCommitted(deps, sessionId, turnId, result, headRevision, job.fence.fencingToken);
  return committedEnd(turnId, result.outcome, headRevision, announced?.released === true);
}
