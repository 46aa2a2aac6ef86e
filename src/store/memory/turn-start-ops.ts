// A turn start on an idle session in one step of the memory store (ADR 0023): submitInput, and
// on a vacant session the lease claim, the idle input claim and the committed state with it.
import { sessionNotFound } from "../../domain/errors.js";
import type { TurnInputDraft } from "../../domain/inputs.js";
import type { TurnStartClaim, TurnStartReceipt } from "../../domain/turn-start.js";
import { turnInputHash } from "../shared/content-hash.js";
import { logLeaseClaim } from "../shared/store-log.js";
import { snapshotOf } from "./commit-ops.js";
import { atomically, type MemoryContext } from "./context.js";
import { claimInCell, submitInCell } from "./input-ops.js";
import { acquire } from "./lease-ops.js";
import { admissionStepsOf } from "./quota-ops.js";
import { turnIdOfInput } from "../../ports/turn-ids.js";

export function startTurn(
  ctx: MemoryContext,
  draft: TurnInputDraft,
  claim: TurnStartClaim,
): Promise<TurnStartReceipt> {
  const contentHash = turnInputHash(draft);
  return atomically(ctx, draft.sessionId, (cell, nowMs) => {
    if (claim.committedOnly === true && cell.headRevision === 0) {
      throw sessionNotFound(draft.sessionId);
    }
    const logEnd = ctx.announcements?.lastSeqNow(cell.sessionId);
    const submitted =
      logEnd === undefined
        ? { submitted: submitInCell(cell, draft, contentHash, nowMs) }
        : { submitted: submitInCell(cell, draft, contentHash, nowMs), logEnd };
    // Vacant: no lease left behind (an expired one may have a turn to announce) and no parked
    // turn; anything else is left to the driver's own claim.
    if (cell.lease !== undefined || cell.parked !== undefined) return submitted;
    // The admission's checks before the lease (ADR 0038): refused, nothing more is written.
    const inputId = submitted.submitted.input.inputId;
    const holder = `${cell.sessionId}/${turnIdOfInput(cell.sessionId, inputId)}`;
    const steps = claim.admission && ctx.quotas && admissionStepsOf(ctx.quotas);
    const admission = claim.admission && { ...claim.admission, holder };
    const verdict = steps && admission ? steps.check(admission) : undefined;
    if (verdict?.kind === "refused") {
      const { limit, retryAfterMs } = verdict;
      return { ...submitted, admission: { kind: "refused" as const, limit, retryAfterMs } };
    }
    const outcome = acquire(ctx, cell, claim.owner, claim.ttlMs, nowMs, true);
    logLeaseClaim(ctx.log, cell.sessionId, claim.owner, claim.ttlMs, outcome);
    if (outcome.kind !== "acquired") return submitted;
    const { lease } = outcome;
    const inputs = claimInCell(cell, lease.fencingToken, { kind: "idle" }, claim.maxInputs, nowMs);
    const snapshot = snapshotOf(cell, claim.since);
    // The tenant's spend read in the step (ADR 0038): this store keeps it beside the sessions.
    const read = claim.tenantSpend;
    const tenantSpend = read && {
      window: read.window,
      spent: ctx.tenantSpend.get(`${read.tenant} ${read.window}`) ?? 0,
    };
    // The slot is this input's turn's: taken only when the claim took exactly this input.
    const own = inputs?.inputs.length === 1 && inputs.inputs[0]?.inputId === inputId;
    let admitted: TurnStartReceipt["admission"];
    if (steps && admission && verdict && own) {
      steps.take(admission, verdict.kind);
      admitted = { kind: "admitted", holder };
    }
    return {
      ...submitted,
      ...(admitted && { admission: admitted }),
      started: { lease, inputs, snapshot, ...(tenantSpend && { tenantSpend }) },
    };
  });
}
