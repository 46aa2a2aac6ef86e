// A StreamTurn's submit: on a store with a one-step turn start (ADR 0023) and a session no loop
// of this replica runs, the submit also takes the lease, the input and the transcript since what
// this replica holds; otherwise the plain submit, and the driver claims on its own.
import type { SessionId } from "../../domain/ids.js";
import type { TurnInputDraft, SubmitInputReceipt } from "../../domain/inputs.js";
import type { TranscriptMark } from "../../domain/session.js";
import type { TurnStartClaim, TurnStartReceipt } from "../../domain/turn-start.js";
import { quotaOf, tenantOfSession } from "../../domain/quotas.js";
import { spendWindow } from "../limits/index.js";
import type { RuntimeDeps } from "../deps.js";
import { turnIdOfInput } from "../turn/index.js";

/** Inputs one turn takes at the idle point. */
export const INPUTS_PER_TURN = 1;

/**
 * A turn start's lease, claims and committed state (TurnStartReceipt's `started`), and the
 * replica's steer hearing from before the step when no steer can be pending for its turn.
 */
export type StartedTurn = NonNullable<TurnStartReceipt["started"]> & { steerHearing?: number };

export interface Submitted {
  submitted: SubmitInputReceipt;
  /** Where the log ended in the submit's step, when the store said (TurnStartReceipt). */
  logEnd?: number;
  /** The lease and what was claimed and read with it: hand it to driver.driveStarted. */
  started?: StartedTurn;
  /** The session's ready mark, sent once the input was stored (none where the start's step made it). */
  marked?: Promise<void>;
}

/**
 * Marks the session ready after its input was stored, never before: a holder clearing the mark
 * looks for waiting input after its clear, so a mark it removes belongs to input that look sees
 * (ADR 0026). The caller awaits it (a rejection is also kept from going unhandled meanwhile).
 */
function markStored(deps: RuntimeDeps, sessionId: SessionId): Promise<void> {
  const marked = deps.ready.markReady(sessionId);
  marked.catch(() => undefined);
  return marked;
}

const withMark = (mark: TranscriptMark | undefined): { since?: TranscriptMark } =>
  mark ? { since: mark } : {};

/**
 * Whether a StreamTurn's input goes through startTurn: the store has it, the input is for the
 * next turn (not steered) and no loop of this replica runs the session (`isDriving`).
 */
export function startsInOneStep(
  deps: RuntimeDeps,
  isDriving: boolean,
  busyStrategy: string,
): boolean {
  return deps.store.startTurn !== undefined && busyStrategy !== "steer" && !isDriving;
}

/**
 * The submit, or with `start` (startsInOneStep) the turn start. Where this replica hears every
 * session's signals, the start also marks its turn running (ADR 0024): the turn's listener then
 * takes no step of its own.
 */
export async function submitOrStart(
  deps: RuntimeDeps,
  start: boolean,
  draft: TurnInputDraft,
): Promise<Submitted> {
  const { sessionId } = draft;
  if (!start || !deps.store.startTurn || draft.delivery.kind !== "next_turn") {
    const submitted = await deps.store.submitInput(draft);
    return { submitted, marked: markStored(deps, sessionId) };
  }
  // Hearing first: a signal sent between the mark and the listener is kept for it. Not hearing
  // (Redis refused the subscription), the start marks nothing and the listener takes its step.
  const hears =
    (await deps.signals.hearAllSessions?.().then(
      () => true,
      () => false,
    )) === true;
  // Taken before the step: the same token at a checkpoint means every steer stored since reached
  // this replica's listeners (ADR 0041).
  const steerHearing = deps.signals.steerHearing?.();
  const receipt = await deps.store.startTurn(draft, {
    owner: deps.owner,
    ttlMs: deps.leaseTtlMs,
    maxInputs: INPUTS_PER_TURN,
    ...withMark(deps.transcripts.mark(sessionId)),
    ...(hears && { turnIdOf: (inputId: string) => turnIdOfInput(sessionId, inputId) }),
    ...spendReadOf(deps, sessionId),
    ...admissionOf(deps, sessionId),
  });
  const started = withSteerHearing(withAdmission(deps, sessionId, receipt), receipt, steerHearing);
  // Where the store keeps the ready index, the start's step marked the session (ADR 0024).
  const { submitted, logEnd } = receipt;
  const result: Submitted = {
    submitted,
    ...(logEnd !== undefined && { logEnd }),
    ...(started && { started }),
  };
  return deps.store.keepsReadyIndex ? result : { ...result, marked: markStored(deps, sessionId) };
}

/**
 * The tenant's spend read in the start's step where the store's steps reach it and the tenant
 * has a budget (ADR 0038): the turn's first budget check then takes no step of its own.
 */
function spendReadOf(deps: RuntimeDeps, sessionId: SessionId): Pick<TurnStartClaim, "tenantSpend"> {
  const budgets = deps.budgets;
  const tenant = tenantOfSession(sessionId);
  const budget = budgets?.tenants.get(tenant);
  if (!budgets || !budget || deps.store.chargesInCommit?.({ spend: budgets.store }) !== true) {
    return {};
  }
  return { tenantSpend: { tenant, window: spendWindow(budget, deps.clock.nowMs()) } };
}

/**
 * The tenant's quota admission in the start's step where the store's steps reach the quota
 * counters (ADR 0038): the driver then takes no admitTurn step for the turn.
 */
function admissionOf(deps: RuntimeDeps, sessionId: SessionId): Pick<TurnStartClaim, "admission"> {
  const quotas = deps.quotas;
  const tenant = tenantOfSession(sessionId);
  const limits = quotas && quotaOf(quotas.config, tenant);
  if (!quotas || !limits || deps.store.chargesInCommit?.({ quotas: quotas.store }) !== true) {
    return {};
  }
  return { admission: { tenant, limits, slotTtlMs: deps.leaseTtlMs } };
}

/**
 * The hearing goes with a turn that consumes exactly the input its start's step stored: that
 * input's id was made for the step, so its turn's id was known to nobody before it and no steer
 * for the turn can be pending when it starts (ADR 0041). Any other start claims as ever.
 */
function withSteerHearing(
  started: StartedTurn | undefined,
  receipt: TurnStartReceipt,
  steerHearing: number | undefined,
): StartedTurn | undefined {
  if (!started || steerHearing === undefined || receipt.submitted.deduplicated) return started;
  const claimed = started.inputs?.inputs ?? [];
  const own = claimed.length === 1 && claimed[0]?.inputId === receipt.submitted.input.inputId;
  return own ? { ...started, steerHearing } : started;
}

/**
 * The start's lease and claims with the slot its admission took; logged as admitToQuota logs.
 * Refused, nothing was started: the driver claims on its own and waits as ever (quota_wait).
 */
function withAdmission(
  deps: RuntimeDeps,
  sessionId: SessionId,
  receipt: TurnStartReceipt,
): StartedTurn | undefined {
  const admission = receipt.admission;
  if (admission) {
    const tenant = tenantOfSession(sessionId);
    deps.logger.info({ sessionId, tenant, inStart: true, ...admission }, "quota admission");
    if (admission.kind === "refused") {
      deps.metrics?.countQuotaRefusal?.(tenant, admission.limit, "admission");
    }
  }
  const started = receipt.started;
  if (!started || admission?.kind !== "admitted") return started;
  return { ...started, admittedSlot: admission.holder };
}
