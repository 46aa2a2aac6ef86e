// The first step of a turn: what it runs with, read before anything is emitted. The committed
// head, the input it consumes, its settings (the pinned agent under the turn's own options) and
// its tools; a resumed turn takes all of these from the progress it saved when it parked.
import type { TurnCharges } from "../limits/index.js";
import { overlayContextManagement } from "../../domain/compaction.js";
import type { InputItem, Message } from "../../domain/conversation.js";
import type { InputId, SessionId } from "../../domain/ids.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { ResumeOutcome } from "../../domain/parked-turns.js";
import type { TurnInputClaim } from "../../domain/inputs.js";
import type { QueuedWorkClaim } from "../../domain/queue.js";
import type { SessionSnapshot } from "../../domain/session.js";
import { toolIdempotencyKey, type ToolCallState } from "../../domain/tool-calls.js";
import type { ToolDefinition } from "../../ports/tool-executor.js";
import type { SelectedTools } from "../../ports/turn-tools.js";
import type { RuntimeDeps } from "../deps.js";
import { tighterBudget } from "../../domain/budgets.js";
import { overlayTools, pinnedDefaults } from "./agent-definition.js";
import { decodeInputs, type DecodedInput, type TurnSettings } from "./input-payload.js";
import { decodeProgress, type ParkedProgress } from "./turn-parking.js";
import { stableTurnId } from "./turn-id.js";

export interface TurnWork {
  fence: LeaseFence;
  inputs: TurnInputClaim | undefined;
  work: QueuedWorkClaim | undefined;
  /** Aborted when the lease is lost or the replica stops. */
  signal: AbortSignal;
  /** Aborted when the replica starts closing: a turn waiting for a client parks at once. */
  closing?: AbortSignal;
  /** A parked turn this holder resumes (its claims are `inputs` and `work`). */
  resumed?: Exclude<ResumeOutcome, { status: "waiting" }>;
  /**
   * What the turn start's step gave the turn (store.startTurn): the committed state read since
   * the transcript cache's mark (the turn loads nothing more), and the turn it marked running
   * (its listener then takes no step of its own, ADR 0024).
   */
  loaded?: {
    snapshot: SessionSnapshot | undefined;
    markedTurnId?: string | undefined;
    /** The tenant's spend the start's step read (ADR 0038): the first budget check's. */
    tenantSpend?: { window: string; spent: number } | undefined;
    /** The quota slot the start's step took for its input's turn (ADR 0038). */
    admittedSlot?: string | undefined;
    /**
     * The replica's steer hearing from before the start's step, given when no steer could be
     * pending for the turn then (withSteerHearing, ADR 0041).
     */
    steerHearing?: number | undefined;
  };
  /** Told as soon as the turn's commit released the lease (its completion just published). */
  onReleased?: () => void;
  /** What the turn owes its tenant's limits, carried by its commit where it can (ADR 0038). */
  charges?: TurnCharges;
}

export interface PreparedTurn {
  sessionId: SessionId;
  turnId: string;
  resumed: TurnWork["resumed"];
  /** What the turn saved when it parked (a resumed turn). */
  saved: ParkedProgress | undefined;
  snapshot: SessionSnapshot | undefined;
  history: readonly Message[];
  /** The user's items and the queued work's texts (none for a resumed turn). */
  items: InputItem[];
  inputIds: InputId[];
  settings: TurnSettings;
  clientTools: ToolDefinition[];
  /** Tool servers' tools the turn selected, as they are now (a server that is down is named). */
  selected: SelectedTools | undefined;
  /** The turn's tool-call records as stored (a resumed turn): answers given while it was parked. */
  recordedStates: ToolCallState[];
}

/**
 * What a turn's claims carry, decoded once when the turn begins (its trace and its preparation
 * both read them): the inputs' payloads, and a resumed turn's parked progress. A progress this
 * version cannot read is kept as its error: the preparation throws it, as the decode would.
 */
export interface DecodedWork {
  inputs: DecodedInput[];
  saved: ParkedProgress | undefined;
  unreadable?: { error: unknown };
}

export function decodeWork(job: TurnWork): DecodedWork {
  const inputs = decodeInputs(job.inputs?.inputs ?? []);
  try {
    return { inputs, saved: job.resumed ? decodeProgress(job.resumed.parked.progress) : undefined };
  } catch (error) {
    return { inputs, saved: undefined, unreadable: { error } };
  }
}

/** The id a turn runs under: a resumed turn keeps its own, a new one derives it from its claims. */
export const turnIdOf = (job: TurnWork): string =>
  job.resumed?.parked.turnId ?? stableTurnId(job.fence.sessionId, job);

/** The compaction policy is overlaid field by field, not replaced whole like other settings. */
function withContextManagement(
  agent: TurnSettings | undefined,
  turn: TurnSettings | undefined,
): Pick<TurnSettings, "contextManagement"> {
  const cm = overlayContextManagement(agent?.contextManagement, turn?.contextManagement);
  return cm === undefined ? {} : { contextManagement: cm };
}

export async function prepareTurn(
  deps: RuntimeDeps,
  job: TurnWork,
  decoded: DecodedWork,
): Promise<PreparedTurn> {
  const sessionId = job.fence.sessionId;
  const resumed = job.resumed;
  if (decoded.unreadable) throw decoded.unreadable.error;
  const saved = decoded.saved;
  const turnId = turnIdOf(job);
  // Where the log ends is not read: the writer learns it from the turn's first event, which the
  // turn awaits before anything else is emitted.
  const { snapshot, history } = job.loaded
    ? deps.transcripts.accept(sessionId, job.loaded.snapshot)
    : await deps.transcripts.load(sessionId);

  const payloads = saved ? [] : decoded.inputs.map((i) => i.payload);
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
    ...withContextManagement(agent?.settings, payloads[0]?.settings),
  };
  // A turn's budget may only lower the agent's, limit by limit (ADR 0016).
  const budget = tighterBudget(agent?.settings.budget, payloads[0]?.settings.budget);
  if (!saved && budget) settings.budget = budget;
  const clientTools =
    saved?.clientTools ??
    overlayTools(
      agent?.clientTools ?? [],
      payloads.flatMap((p) => p.clientTools),
    );
  const selected = deps.selectableTools?.forTurn(settings.serverTools ?? [], (callId) =>
    toolIdempotencyKey(sessionId, turnId, callId),
  );
  const recordedStates = resumed ? await deps.store.readToolCalls(sessionId, turnId) : [];
  return {
    sessionId,
    turnId,
    resumed,
    saved,
    snapshot,
    history,
    items,
    inputIds: (job.inputs?.inputs ?? []).map((i) => i.inputId),
    settings,
    clientTools,
    selected,
    recordedStates,
  };
}
