// A turn start on an idle session in one store step (ADR 0023): the input's submit, and when
// nothing holds the session, the lease, the idle input claim and the committed state with it.
import type { SubmitInputReceipt, TurnInputClaim } from "./inputs.js";
import type { LeaseOwner, SessionExecutionLease } from "./lease.js";
import type { SessionSnapshot, TranscriptMark } from "./session.js";
import type { QuotaLimitName, TenantQuota } from "./quotas.js";

export interface TurnStartClaim {
  owner: LeaseOwner;
  ttlMs: number;
  /** At most this many inputs are claimed (as claimInputs at the idle point). */
  maxInputs: number;
  /** The transcript the caller holds: only messages after it are returned (as loadSession). */
  since?: TranscriptMark;
  /**
   * The id of the turn a claim of just this input makes (the runtime's derivation). Given, and
   * where the store keeps the turn's signals beside it (a Redis store), a step whose claim takes
   * exactly the input it stored also marks that turn as the session's running turn for `ttlMs`,
   * as the turn's listener would (ADR 0024); `started.markedTurnId` says so.
   */
  turnIdOf?: (inputId: string) => string;
  /**
   * True: a session with no commit yet (never created, or deleted) is left untouched and the
   * step throws session_not_found. The storage-limit wrapper's one-step path (ADR 0029): a
   * session with a commit already holds its storage slot, so only a step that could create
   * one needs the tenant's slot taken first.
   */
  committedOnly?: boolean;
  /**
   * The tenant's spend to read in the step when the lease is taken (ADR 0038), so the first
   * model call's budget check needs no read of its own: given only where the store's
   * chargesInCommit said yes for its spend port; elsewhere the store ignores it.
   */
  tenantSpend?: { tenant: string; window: string };
  /**
   * The tenant's quota admission in the step (ADR 0038), as QuotaStore.admitTurn with holder
   * `<session id>/<the turn a claim of just this input makes>`: checked before the lease is
   * taken (refused: no lease, no claim; `admission` says why), the slot taken when the claim
   * took exactly this input. Given only where chargesInCommit said yes for the quota port.
   */
  admission?: { tenant: string; limits: TenantQuota; slotTtlMs: number };
}

export interface TurnStartReceipt {
  submitted: SubmitInputReceipt;
  /**
   * What became of TurnStartClaim.admission in the step: `admitted` (the slot of `holder` is
   * held; the turn is `started`'s), or `refused` (nothing was started). Absent: no admission
   * happened in the step (none asked, the session was not vacant, or the claim took another input).
   */
  admission?:
    | { kind: "admitted"; holder: string }
    | { kind: "refused"; limit: QuotaLimitName; retryAfterMs: number };
  /**
   * Present when the session was vacant in the submit's step (no lease left behind: never held
   * or released; no parked turn): the caller holds a fresh lease, with what the idle claim took
   * (undefined when nothing was claimable: a deduplicated input already taken) and the
   * committed state as loadSession would answer just after the claim. Absent otherwise: only
   * the submit happened, as submitInput.
   */
  /**
   * Where the session's event log ended in the same step (its last sequence number), when the
   * store has the log at hand (as for a commit's announcement, ADR 0011); absent otherwise.
   */
  logEnd?: number;
  started?: {
    lease: SessionExecutionLease;
    inputs: TurnInputClaim | undefined;
    snapshot: SessionSnapshot | undefined;
    /** The turn the step marked running (TurnStartClaim.turnIdOf); absent when it marked none. */
    markedTurnId?: string;
    /** The tenant's spend in the claim's window, read in the step (TurnStartClaim.tenantSpend). */
    tenantSpend?: { window: string; spent: number };
    /** The quota slot the runtime found taken for this turn in the step (`admission` admitted). */
    admittedSlot?: string;
  };
}
