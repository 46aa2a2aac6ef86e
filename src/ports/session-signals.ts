// Signals between replicas about a running turn: cancel requests, client tool results and which
// turn is active. Any replica may send; the replica holding the session's lease listens.
import type { SessionId } from "../domain/ids.js";
import type { ApprovalDecision, ClientToolResult } from "../domain/tool-calls.js";

export type { ClientToolResult };

export interface TurnListener {
  onCancel(): void;
  onToolResult(result: ClientToolResult): void;
  onDecision(decision: ApprovalDecision): void;
  /** A steer for this turn was stored (ADR 0041): its next checkpoint must claim. */
  onSteer?(): void;
}

/** Told, in the step that stores it, of each new steer for a turn (a store's submit; ADR 0041). */
export type SteerNotice = (sessionId: SessionId, turnId: string) => void;

/**
 * Stops a turn's listener: it hears nothing more, and the turn's stored signals and running
 * marker go. `signalsCleared`: the turn's commit deleted those in its step already
 * (CommitAnnounced, ADR 0024), so only the hearing stops.
 */
export type StopListening = (options?: { signalsCleared?: boolean }) => Promise<void>;

export interface SessionSignals {
  activeTurn(sessionId: SessionId): Promise<string | undefined>;
  /** Asks the running turn (or only `turnId`) to cancel; false when no turn was running. */
  requestCancel(sessionId: SessionId, turnId?: string): Promise<boolean>;
  /** Delivers results to the running turn `turnId`; results for other turns are refused. */
  submitToolResults(
    sessionId: SessionId,
    turnId: string,
    results: ClientToolResult[],
  ): Promise<boolean>;
  /** Delivers approval decisions to the running turn `turnId`, as submitToolResults. */
  submitDecisions(
    sessionId: SessionId,
    turnId: string,
    decisions: ApprovalDecision[],
  ): Promise<boolean>;
  /**
   * The lease holder listens for its running turn, marked meanwhile as the session's running turn
   * for `activeTtlMs` (what `activeTurn` answers). Signals sent before the listener took effect
   * are delivered at once. The returned function stops listening and clears the marker.
   * `markedRunning`: a turn start marked the turn running in its own step (ADR 0024) after
   * `hearAllSessions` resolved; the listener then takes no step of its own, and what was sent to
   * the turn since the mark (heard by the replica, kept for it) is delivered at once.
   */
  listen(
    sessionId: SessionId,
    turnId: string,
    listener: TurnListener,
    activeTtlMs: number,
    options?: { markedRunning?: boolean },
  ): Promise<StopListening>;
  /**
   * Resolves once this replica hears every session's signals and keeps, for a short while, those
   * no listener took: a turn marked running by another step (TurnStartClaim.turnIdOf) then loses
   * nothing sent before its listener starts. Absent where a listener always takes its own step.
   */
  hearAllSessions?(): Promise<void>;
  /**
   * Where every steer stored for a turn this replica runs reaches the turn's listener
   * (`onSteer`; ADR 0041): a token that stays the same for as long as none can have been missed
   * (the replica heard every session's signals throughout). Undefined while that is not known;
   * absent where the transport cannot say.
   */
  steerHearing?(): number | undefined;
  /**
   * The notice a store's submit calls in its step for each new steer (attach it to the store):
   * the steer reaches this replica's listener at once, before the submitter is answered.
   */
  steerNotice?(): SteerNotice;
  close(): Promise<void>;
}
