// Decides whether a lease holder is provably dead from the claimant's point of view.
import type { LeaseOwner } from "../domain/lease.js";

export interface LivenessProbe {
  /**
   * True only when both owners are `local_process` on the same host and boot and the holder's
   * pid is not running with its recorded start time. Anything else is never provably dead.
   */
  isProvablyDead(holder: LeaseOwner, claimant: LeaseOwner): boolean;
}
