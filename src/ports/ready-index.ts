// Sessions that may have work waiting: a hint shared by replicas so a sweep finds sessions whose
// holder died. Never the truth: a missing entry is repaired on the next submit, a stale entry
// costs one empty claim.
import type { SessionId } from "../domain/ids.js";

export interface ReadyIndex {
  /** Due now (an earlier due time is kept). */
  markReady(sessionId: SessionId): Promise<void>;
  /**
   * Due at `atMs` exactly, replacing any earlier time: a parked turn is next looked at then
   * (its expiry, or a recheck that repairs a lost wake-up).
   */
  wakeAt(sessionId: SessionId, atMs: number): Promise<void>;
  /** Removes the hint (the session was drained). */
  markIdle(sessionId: SessionId): Promise<void>;
  /** Up to `limit` sessions due by now, longest due first. */
  listReady(limit: number): Promise<SessionId[]>;
  /** How many sessions are hinted (a gauge of sessions with waiting work). */
  size(): Promise<number>;
}
