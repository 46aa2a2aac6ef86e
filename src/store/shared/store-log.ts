// Decision records of the stores: one structured record per lease claim, reclaim, renewal
// refusal and fencing refusal, with the decision's inputs and its outcome, the same on every
// backend. Lease tokens prove a claim, so they are never logged; owners appear by id.
// Every helper returns at once when no logger was given, before building any record.
import type { SessionId } from "../../domain/ids.js";
import type { LeaseClaimOutcome, LeaseFence, LeaseOwner } from "../../domain/lease.js";

/** The slice of a pino logger the stores use. */
export interface StoreLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** tryClaimLease: acquired and re-entered at debug (the common case), busy at info. */
export function logLeaseClaim(
  log: StoreLogger | undefined,
  sessionId: SessionId,
  owner: LeaseOwner,
  ttlMs: number,
  outcome: LeaseClaimOutcome,
): void {
  if (!log) return;
  const inputs = { sessionId, ownerId: owner.ownerId, incarnationId: owner.incarnationId, ttlMs };
  if (outcome.kind === "acquired") {
    log.debug(
      {
        ...inputs,
        outcome: outcome.reentered ? "reentered" : "acquired",
        fencingToken: outcome.lease.fencingToken,
        expiresAtMs: outcome.lease.expiresAtMs,
      },
      "lease claimed",
    );
  } else {
    log.info({ ...inputs, outcome: "busy", ...holderFields(outcome) }, "lease claim refused");
  }
}

/** reclaimLease, with the claimant's liveness verdict on the observed holder. */
export function logLeaseReclaim(
  log: StoreLogger | undefined,
  sessionId: SessionId,
  claimant: LeaseOwner,
  observed: LeaseFence,
  observedDead: boolean,
  ttlMs: number,
  outcome: LeaseClaimOutcome,
): void {
  if (!log) return;
  const inputs = {
    sessionId,
    ownerId: claimant.ownerId,
    incarnationId: claimant.incarnationId,
    observedOwnerId: observed.owner.ownerId,
    observedIncarnationId: observed.owner.incarnationId,
    observedFencingToken: observed.fencingToken,
    observedDead,
    ttlMs,
  };
  if (outcome.kind === "acquired") {
    log.info(
      {
        ...inputs,
        outcome: "acquired",
        fencingToken: outcome.lease.fencingToken,
        expiresAtMs: outcome.lease.expiresAtMs,
      },
      "lease reclaimed",
    );
  } else {
    log.info({ ...inputs, outcome: "busy", ...holderFields(outcome) }, "lease reclaim refused");
  }
}

/** renewLease refused: the fence no longer names the live lease. */
export function logRenewalRefused(
  log: StoreLogger | undefined,
  fence: LeaseFence,
  ttlMs: number,
): void {
  if (!log) return;
  log.warn(
    {
      sessionId: fence.sessionId,
      ownerId: fence.owner.ownerId,
      fencingToken: fence.fencingToken,
      ttlMs,
      outcome: "lease_expired",
    },
    "lease renewal refused",
  );
}

/** A fenced operation (a claim, a defer) refused because its fence is not the live lease. */
export function logFenceRefused(
  log: StoreLogger | undefined,
  operation: string,
  fence: LeaseFence,
): void {
  if (!log) return;
  log.warn(
    {
      sessionId: fence.sessionId,
      operation,
      ownerId: fence.owner.ownerId,
      fencingToken: fence.fencingToken,
      outcome: "lease_expired",
    },
    "fenced operation refused",
  );
}

/** A commit refused because one of its claim completions lost its lease generation or items. */
export function logClaimSuperseded(
  log: StoreLogger | undefined,
  sessionId: SessionId,
  kind: "queued_work" | "turn_input",
  claimId: string,
  fencingToken: number | undefined,
): void {
  if (!log) return;
  log.warn(
    { sessionId, operation: "commit", claim: kind, claimId, fencingToken, outcome: "superseded" },
    "commit refused: claim superseded",
  );
}

function holderFields(outcome: {
  holder: { owner: LeaseOwner; fencingToken: number; expiresAtMs: number };
}) {
  return {
    holderOwnerId: outcome.holder.owner.ownerId,
    holderIncarnationId: outcome.holder.owner.incarnationId,
    holderFencingToken: outcome.holder.fencingToken,
    holderExpiresAtMs: outcome.holder.expiresAtMs,
  };
}
