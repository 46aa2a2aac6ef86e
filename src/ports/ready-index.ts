// Sessions that may have work waiting: a hint shared by replicas so a sweep finds sessions whose
// holder died. Never the truth: a missing entry is repaired on the next submit, a stale entry
// costs one empty claim.
import type { SessionId } from "../domain/ids.js";

export interface ReadyIndex {
  markReady(sessionId: SessionId): Promise<void>;
  /** Removes the hint (the session was drained). */
  markIdle(sessionId: SessionId): Promise<void>;
  /** Up to `limit` sessions, oldest hint first. */
  listReady(limit: number): Promise<SessionId[]>;
  /** How many sessions are hinted (a gauge of sessions with waiting work). */
  size(): Promise<number>;
}
