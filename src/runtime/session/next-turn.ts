// What a session's hold runs next: the idle claims (inputs first, then queued work), or the
// parked turn once it can go on; and whether anything still waits for a holder.
import type { SessionId } from "../../domain/ids.js";
import type { TurnInputClaim } from "../../domain/inputs.js";
import type { LeaseFence } from "../../domain/lease.js";
import type { RuntimeDeps } from "../deps.js";
import type { TurnWork } from "../turn/index.js";
import { parkedWake, type HoldEnd } from "./hold-end.js";
import { INPUTS_PER_TURN } from "./turn-start.js";

const WORK_PER_TURN = 16;

export async function hasPendingWork(deps: RuntimeDeps, sessionId: SessionId): Promise<boolean> {
  const [inputs, work] = await Promise.all([
    deps.store.listInputs(sessionId),
    deps.store.listWork(sessionId),
  ]);
  // Claimed but unsettled items count: their claimant may be gone (a successor re-claims them).
  return (
    inputs.some((i) => i.state === "claimed" || i.delivery.kind === "next_turn") || work.length > 0
  );
}

/**
 * Clears the session's ready mark, then looks whether anything waits for a holder (an input to
 * run or one claimed, queued work, a parked turn) and marks it again if so. The clear comes
 * first: a look before it could miss an input stored and marked in between, and the clear would
 * then drop that input's only mark, leaving a session no sweep finds (ADR 0026). A submit marks
 * only after its input is stored, so any mark this clear removes belongs to input the look sees.
 * Returns whether an input or queued work waits (a parked turn goes on by its own wake-up).
 */
export async function clearReadyMark(deps: RuntimeDeps, sessionId: SessionId): Promise<boolean> {
  await deps.ready.markIdle(sessionId);
  let looked: [boolean, unknown];
  try {
    looked = await Promise.all([
      hasPendingWork(deps, sessionId),
      deps.store.readParkedTurn(sessionId),
    ]);
  } catch (error) {
    // Not known whether anything waits: the mark goes back (a stale one costs one empty look).
    await deps.ready.markReady(sessionId).catch(() => undefined);
    throw error;
  }
  const [pending, parked] = looked;
  if (pending || parked) await deps.ready.markReady(sessionId);
  return pending;
}

/**
 * What the next turn under `fence` runs: what the idle claims take, or else the parked turn once
 * it can go on; or how the hold ends when there is none. "again": the parked turn went meanwhile,
 * look once more.
 */
export async function nextTurn(
  deps: RuntimeDeps,
  fence: LeaseFence,
  firstClaim: Promise<TurnInputClaim | undefined> | undefined,
): Promise<
  | { kind: "turn"; claims: Pick<TurnWork, "inputs" | "work" | "resumed"> }
  | { kind: "again" }
  | Extract<HoldEnd, { kind: "no_work" | "parked" }>
> {
  const inputs = await (firstClaim ??
    deps.store.claimInputs(fence, { kind: "idle" }, INPUTS_PER_TURN));
  const work = inputs ? undefined : await deps.store.claimReadyWork(fence, "idle", WORK_PER_TURN);
  if (inputs || work) return { kind: "turn", claims: { inputs, work } };
  // Idle claims find nothing while a turn is parked: it goes first, once it can.
  const parked = await deps.store.readParkedTurn(fence.sessionId);
  if (!parked) return { kind: "no_work" };
  const outcome = await deps.store.resumeTurn(fence, parked.turnId);
  if (!outcome) return { kind: "again" };
  if (outcome.status === "waiting") {
    return parkedWake(deps.clock.nowMs(), parked.expiresAtMs, false);
  }
  return {
    kind: "turn",
    claims: { inputs: outcome.inputClaim, work: outcome.workClaim, resumed: outcome },
  };
}

/** The turn a hold runs; a turn start's read goes to the hold's first turn (not a resumed one). */
export function turnWork(
  fence: LeaseFence,
  claims: Pick<TurnWork, "inputs" | "work" | "resumed">,
  signal: AbortSignal,
  closing: AbortSignal,
  loaded: TurnWork["loaded"],
): TurnWork {
  const work: TurnWork = { fence, ...claims, signal, closing };
  if (loaded && !claims.resumed) work.loaded = loaded;
  return work;
}
