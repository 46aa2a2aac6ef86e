// How a session's hold ends: the one value the hold returns (hold-runner.ts) and the driver's loop
// switches on (session-driver.ts) to decide what the session needs next. A turn's own end
// (TurnEnd) becomes one of these, or the next turn, in after-turn.ts.
import { PARK_RECHECK_MS } from "../turn/index.js";

export type HoldEnd =
  /** The idle claims found nothing and no turn is parked: the lease is let go; look once more. */
  | { kind: "no_work" }
  /**
   * A step let the lease go as it saw nothing wait (a commit's, or the release after a turn):
   * input that comes now drives anew; the loop only clears the ready mark.
   */
  | { kind: "released" }
  /** The session's turn is parked: look again at `wakeAtMs`; undefined: it can go on now. */
  | { kind: "parked"; wakeAtMs: number | undefined }
  /** A quota refused the next turn: its claims stay; the session is looked at at `wakeAtMs`. */
  | { kind: "quota_wait"; wakeAtMs: number }
  /**
   * The replica is closing (its drain began, or timed out): the lease is let go, and a turn that
   * waited for a client was handed over to a successor.
   */
  | { kind: "closing" }
  /** The lease is gone: the session is left to the others, its claims and ready hint with it. */
  | { kind: "lost" };

/** When a parked turn should next be looked at; now (undefined) when it can go on already. */
export function parkedWake(
  nowMs: number,
  expiresAtMs: number,
  resumable: boolean,
): Extract<HoldEnd, { kind: "parked" }> {
  if (resumable) return { kind: "parked", wakeAtMs: undefined };
  return { kind: "parked", wakeAtMs: Math.min(expiresAtMs, nowMs + PARK_RECHECK_MS) };
}

/** The default of an exhaustive switch: a member added to a union fails the type check here. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
