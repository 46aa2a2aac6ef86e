// The live parts of a running turn and how it stops short. The event writer, the client tool
// bridge, the event mapper and the parking monitor lean on each other (a wait may park the turn,
// parking stores what the stream showed), so they are built together here; each way of stopping
// short (parked, handed over, lease lost) is recorded once, and the turn's end is read from it.
import type { TurnInputClaim } from "../../domain/inputs.js";
import { splitWaits, type ParkReceipt } from "../../domain/parked-turns.js";
import type { QueuedWorkClaim } from "../../domain/queue.js";
import type { ToolWait } from "../../domain/tool-calls.js";
import type { TurnEvent } from "../../domain/turn-events.js";
import type { RuntimeDeps } from "../deps.js";
import { createEventWriter, createTurnEventMapper, type EventWriter } from "../stream/index.js";
import { createClientToolBridge, type ClientToolBridge } from "./client-tools.js";
import type { PreparedTurn, TurnWork } from "./turn-preparation.js";
import { approvalPolicy } from "./tool-approval.js";
import type { TurnEnd } from "./turn-end.js";
import { createParkingMonitor, encodeProgress, type ParkingMonitor } from "./turn-parking.js";
import { untracedTurn, type TurnTrace } from "./turn-trace.js";
import { actionRequiredEvent, withParkedOutbox } from "./webhook-events.js";

export type TurnEventMapper = ReturnType<typeof createTurnEventMapper>;

/** How a run stopped short of its commit; the first reason to stop is the one kept. */
export interface RunStops {
  parked?: ParkReceipt;
  handedOver: boolean;
  /** Set only when the lease's loss was the first reason the run was cut. */
  leaseLost?: { cause: unknown };
  /** CancelTurn reached the turn (a cancel that meets a park must not be lost with it). */
  cancelRequested: boolean;
  /** The commit ended the turn's signals in its step (ADR 0024): its listener only stops hearing. */
  signalsCleared?: boolean;
}

export interface TurnRun {
  deps: RuntimeDeps;
  job: TurnWork;
  prep: PreparedTurn;
  /** The turn's span: its model and tool calls, its park and commit (ADR 0013). */
  trace: TurnTrace;
  /** Aborts the engine: a cancel, a park, a hand-over or a lost lease. */
  cancel: AbortController;
  stops: RunStops;
  writer: EventWriter;
  clientTools: ClientToolBridge;
  mapper: TurnEventMapper;
  parking: ParkingMonitor;
  needsApproval: (toolName: string) => boolean;
  /** Claims the turn holds: its own and those made at checkpoints, all completed by the commit. */
  inputClaims: TurnInputClaim[];
  workClaims: QueuedWorkClaim[];
  /** A steer for the turn was heard since its last checkpoint claim (ADR 0041). */
  steers: { heard: boolean };
  /** The engine's sink: nothing once the turn parks (its unwinding is not the turn's). */
  sink: { emit(event: TurnEvent): Promise<void> };
  /** A store call the turn depends on that fails stops it short, uncommitted. */
  stopShort<T>(work: Promise<T>): Promise<T>;
  /** Cuts the run because the lease is gone, unless something cut it first. */
  loseLease(cause: unknown): void;
  /** The replica closes: a turn that waits for a client parks now, or is handed over. */
  handOverIfWaiting(): void;
}

export function openTurn(
  deps: RuntimeDeps,
  job: TurnWork,
  prep: PreparedTurn,
  trace: TurnTrace = untracedTurn,
): TurnRun {
  const { sessionId, turnId } = prep;
  const cancel = new AbortController();
  const stops: RunStops = { handedOver: false, cancelRequested: false };
  const loseLease = (cause: unknown): void => {
    if (!cancel.signal.aborted) stops.leaseLost = { cause };
    cancel.abort(new Error("the session lease was lost before the turn committed"));
  };
  const clientTools = createClientToolBridge({
    definitions: prep.clientTools,
    store: deps.store,
    fence: job.fence,
    turnId,
    timeoutMs: deps.clientToolTimeoutMs,
    // The monitor is built from the bridge below; a wait can only start once the engine runs.
    onWait: () => {
      monitor.check();
      handOverIfWaiting();
    },
  });
  // Answers given while the turn was parked settle its waits at once.
  clientTools.preload(prep.recordedStates);
  const writer = createEventWriter({
    log: deps.log,
    bus: deps.bus,
    sessionId,
    turnId,
    fence: job.fence,
    // Usage, a final tool value and the last window wait for the next write or the commit (ADR 0040).
    hold: true,
    // A turn whose events no longer reach the log will not commit: stop its model and tool calls
    // now rather than spend them.
    onFailure: (error) => cancel.abort(error),
  });
  const needsApproval = approvalPolicy(
    prep.clientTools,
    prep.settings.approvalRequiredTools,
    deps.approvalRequiredTools,
  );
  const mapper = createMapper(deps, prep, writer, clientTools, needsApproval);
  const inputClaims: TurnInputClaim[] = job.inputs ? [job.inputs] : [];
  const workClaims: QueuedWorkClaim[] = job.work ? [job.work] : [];
  const parker = createParker({
    ...{ deps, job, prep, trace, cancel, stops, writer, mapper, clientTools, loseLease },
    ...{ inputClaims, workClaims },
    snapshot: () => monitor.snapshot(),
  });
  const monitor = createParkingMonitor({
    parkAfterMs: deps.parking.afterMs,
    outsideWaits: () => clientTools.waiting(),
    park: parker,
    ...(prep.saved && { settled: prep.saved.settled }),
  });
  function handOverIfWaiting(): void {
    if (stops.handedOver || stops.parked || !job.closing?.aborted) return;
    if (clientTools.waiting() === 0) return;
    // A closing replica parks a waiting turn at once; one that cannot park hands it over.
    if (monitor.parkNowIfWaiting()) return;
    stops.handedOver = true;
    cancel.abort(new Error("the turn was handed over: the replica drains, the turn waits"));
  }
  const stopShort = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error: unknown) => {
      loseLease(error);
      throw error;
    });
  return {
    ...{ deps, job, prep, trace, cancel, stops, writer, clientTools, mapper, needsApproval },
    ...{ parking: monitor, inputClaims, workClaims, stopShort, loseLease },
    steers: { heard: false },
    handOverIfWaiting,
    sink: {
      emit: (event: TurnEvent) =>
        monitor.parking() ? Promise.resolve() : stopShort(mapper.emit(event)),
    },
  };
}

function createMapper(
  deps: RuntimeDeps,
  prep: PreparedTurn,
  writer: EventWriter,
  clientTools: ClientToolBridge,
  needsApproval: (toolName: string) => boolean,
): TurnEventMapper {
  const { sessionId, turnId } = prep;
  return createTurnEventMapper(writer, {
    sessionId,
    turnId,
    clientToolNames: new Set(clientTools.definitions().map((d) => d.name)),
    clientToolTimeoutMs: deps.clientToolTimeoutMs,
    clock: deps.clock,
    beforeClientCall: (wait) => clientTools.record(wait),
    needsApproval,
    ...(deps.selectableTools && {
      serverOf: (name: string) => deps.selectableTools?.serverOf(name),
    }),
    shown: prep.saved?.shown ?? [],
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
}

/**
 * How the run stopped short, if it did: parked first (the engine's unwinding after a park is
 * not the turn's), then a lost lease, a hand-over, and the job's own signal (the lease keeper
 * lost the lease, or the replica stops). Undefined: the run reached its end and may commit.
 */
export async function stoppedShort(run: TurnRun): Promise<TurnEnd | undefined> {
  const { stops, prep, job } = run;
  const turnId = prep.turnId;
  if (stops.parked) return { kind: "parked", turnId, receipt: await cancelWhileParking(run) };
  if (stops.leaseLost) return { kind: "lease_lost", turnId, cause: stops.leaseLost.cause };
  if (stops.handedOver) return { kind: "handed_over", turnId };
  if (job.signal.aborted) return { kind: "lease_lost", turnId, cause: job.signal.reason };
  return undefined;
}

/**
 * A cancel that reached the turn while it parked would be lost with the park (the client was
 * told it took): the parked turn is cancelled in the store, and resumed at once to end.
 */
async function cancelWhileParking(run: TurnRun): Promise<ParkReceipt> {
  const receipt = run.stops.parked as ParkReceipt;
  if (!run.stops.cancelRequested) return receipt;
  const { store } = run.deps;
  await store.cancelParkedTurn(run.prep.sessionId, run.prep.turnId).catch(() => false);
  return { ...receipt, resumable: true };
}

// Parking a running turn: its progress is encoded, announced (turn_parked) and stored in one
// fenced step with its claims (ParkedTurnStore.parkTurn), and the run is cut. A turn whose
// progress is larger than the store takes does not park: it waits on this replica.

interface ParkerParts {
  deps: RuntimeDeps;
  job: TurnWork;
  prep: PreparedTurn;
  trace: TurnTrace;
  cancel: AbortController;
  stops: RunStops;
  writer: EventWriter;
  mapper: TurnEventMapper;
  clientTools: ClientToolBridge;
  inputClaims: TurnInputClaim[];
  workClaims: QueuedWorkClaim[];
  loseLease(cause: unknown): void;
  snapshot: () => ReturnType<ParkingMonitor["snapshot"]>;
}

/** The parking monitor's `park`: false when the turn cannot park (its progress is too large). */
function createParker(parts: ParkerParts): () => boolean {
  const { deps, prep } = parts;
  return () => {
    const state = parts.snapshot();
    const waitingOn = parts.clientTools.waits();
    if (!state) return false;
    const progress = encodeProgress({
      v: 1,
      engine: state.engine,
      settled: state.settled,
      shown: parts.mapper.shownKeys(),
      settings: prep.settings,
      clientTools: prep.clientTools,
      ...(parts.trace.traceparent !== undefined && { trace: parts.trace.traceparent }),
    });
    const bytes = Buffer.byteLength(progress, "utf8");
    if (bytes > deps.parking.maxProgressBytes) {
      deps.logger.warn(
        { sessionId: prep.sessionId, turnId: prep.turnId, bytes },
        "turn too large to park: it waits on this replica",
      );
      return false;
    }
    void storeParkedTurn(parts, progress, waitingOn);
    return true;
  };
}

async function storeParkedTurn(
  parts: ParkerParts,
  progress: string,
  waitingOn: ToolWait[],
): Promise<void> {
  const { deps, writer } = parts;
  try {
    const expiresAtMs = deps.clock.nowMs() + deps.parking.ttlMs;
    await writer.emit({ type: "turn_parked", ...splitWaits(waitingOn), expiresAtMs });
    await writer.flush();
    const { fence } = parts.job;
    const webhookEvent = actionRequiredEvent(
      deps,
      fence.sessionId,
      parts.prep.turnId,
      waitingOn,
      fence.fencingToken,
    );
    parts.stops.parked = await withParkedOutbox(
      deps,
      fence.sessionId,
      webhookEvent !== undefined,
      (outboxExpect) =>
        deps.store.parkTurn(fence, {
          turnId: parts.prep.turnId,
          waitingOn,
          progress,
          inputIds: parts.inputClaims.flatMap((c) => c.inputs.map((i) => i.inputId)),
          batchIds: parts.workClaims.flatMap((c) => c.batches.map((b) => b.batchId)),
          ttlMs: deps.parking.ttlMs,
          webhookEvent,
          ...(outboxExpect && { outboxExpect }),
        }),
    );
    parts.trace.parked(
      fence.fencingToken,
      waitingOn.map((w) => w.callId),
    );
    parts.cancel.abort(new Error("the turn parked: it waits for answers from outside"));
  } catch (error) {
    // Not parked (the lease or a claim is gone, the store is away, the progress too large):
    // the turn stops uncommitted and the next holder runs it again under the same id.
    parts.loseLease(error);
  }
}
