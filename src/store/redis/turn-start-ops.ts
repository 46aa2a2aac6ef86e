// A turn start on an idle session in one script (startTurn-15-19.lua, ADR 0023): the submit, and on
// a vacant session the lease, the idle input claim and the committed state with it.
import { randomUUID } from "node:crypto";
import { sessionNotFound, sourceKeyConflict, TetherError } from "../../domain/errors.js";
import type { QuotaLimitName } from "../../domain/quotas.js";
import type { ClaimId, InputId, SessionId } from "../../domain/ids.js";
import { normalDelivery, type TurnInputDraft } from "../../domain/inputs.js";
import type { TurnStartClaim, TurnStartReceipt } from "../../domain/turn-start.js";
import { turnIdOfInput } from "../../ports/turn-ids.js";
import { turnInputHash } from "../shared/content-hash.js";
import { logLeaseClaim } from "../shared/store-log.js";
import { decodeInput, decodeLease, ownerArgs, pairs } from "./codec.js";
import { decodeSnapshot } from "./commit-ops.js";
import { withReadyKey, type RedisContext } from "./context.js";
import { submitted } from "./input-ops.js";
import { REPLY } from "./replies.js";
import type { ScriptReply } from "./scripts.js";

/** The tenant's keys after the ready index, where the start reads or admits (ADR 0038). */
function tenantKeys(ctx: RedisContext, claim: TurnStartClaim): string[] {
  const tenant = claim.tenantSpend?.tenant ?? claim.admission?.tenant;
  if (tenant === undefined || ctx.readyKey === undefined) return [];
  // One tenant per step: a spend read and an admission of two tenants would be a caller's bug.
  if (claim.admission && claim.tenantSpend && claim.admission.tenant !== claim.tenantSpend.tenant) {
    throw new TetherError(
      "internal",
      "startTurn: the spend read and the admission name two tenants",
    );
  }
  const q = ctx.quotaKeys(tenant);
  return [ctx.tenantSpendKey(tenant), q.slots, q.counters];
}

/** ARGV[21] and ARGV[22] of the start where it has the tenant's keys. */
function tenantArgs(claim: TurnStartClaim): string[] {
  const a = claim.admission;
  const max = (name: QuotaLimitName) => a?.limits[name]?.max ?? 0;
  return [
    claim.tenantSpend?.window ?? "",
    a
      ? JSON.stringify([
          a.slotTtlMs,
          max("concurrent_turns"),
          max("turns_per_minute"),
          max("tokens_per_minute"),
          max("tokens_per_day"),
        ])
      : "",
  ];
}

/** The admission's part of the reply (the header of startTurn-15-19.lua). */
function admissionOf(reply: unknown, holder: string): TurnStartReceipt["admission"] | undefined {
  if (!Array.isArray(reply) || reply.length === 0) return undefined;
  if (reply[0] === 1) return { kind: "admitted", holder };
  return {
    kind: "refused",
    limit: reply[1] as QuotaLimitName,
    retryAfterMs: Number(reply[2]),
  };
}

/** startTurn-15-19.lua's keys, the ready index last where the store keeps it. */
function startKeys(ctx: RedisContext, sessionId: SessionId): string[] {
  const k = ctx.keys(sessionId);
  const ek = ctx.eventKeys(sessionId);
  return withReadyKey(ctx, [
    k.inputs,
    k.inputPayloads,
    k.inputIndex,
    k.inputSources,
    k.sequences,
    k.head,
    k.lease,
    k.parked,
    k.generation,
    k.messages,
    k.metadata,
    ek.eventSeq,
    ek.activeTurn,
    k.turnRecords,
    k.turnOrder,
  ]);
}

export async function startTurn(
  ctx: RedisContext,
  draft: TurnInputDraft,
  claim: TurnStartClaim,
): Promise<TurnStartReceipt> {
  const sessionId = draft.sessionId;
  const inputId = randomUUID() as InputId;
  const claimId = randomUUID() as ClaimId;
  const tenant = tenantKeys(ctx, claim);
  const inputTurnId = turnIdOfInput(sessionId, inputId);
  const reply = await ctx.scripts.run(
    "startTurn",
    [...startKeys(ctx, sessionId), ...tenant],
    [
      inputId,
      draft.sourceKey ?? "",
      turnInputHash(draft),
      JSON.stringify(normalDelivery(draft.delivery)),
      draft.payload,
      ...ownerArgs(claim.owner),
      randomUUID(),
      claim.ttlMs,
      claim.maxInputs,
      claimId,
      claim.since?.epoch ?? "",
      claim.since?.messageCount ?? 0,
      Date.now(),
      sessionId,
      claim.turnIdOf?.(inputId) ?? "",
      draft.trace ?? "",
      inputTurnId,
      claim.committedOnly === true ? "1" : "",
      ...(tenant.length > 0 ? tenantArgs(claim) : []),
    ],
  );
  if (reply[0] === REPLY.NONE) throw sessionNotFound(sessionId);
  if (reply[0] === REPLY.SOURCE_KEY_CONFLICT) {
    throw sourceKeyConflict(sessionId, draft.sourceKey ?? "");
  }
  // Four nested replies after the code, the log's end, the mark (the header of startTurn-15-19.lua).
  const [, submitReply, leaseReply, claimReply, stateReply] = reply as unknown as ScriptReply[];
  const admission = admissionOf(reply[8], `${sessionId}/${inputTurnId}`);
  const receipt = {
    submitted: submitted(ctx, draft, inputId, part(submitReply)),
    logEnd: Number(reply[5]),
    ...(admission && { admission }),
  };
  const leased = part(leaseReply);
  if (leased.length === 0) return receipt;
  const lease = decodeLease(sessionId, leased);
  logLeaseClaim(ctx.log, sessionId, claim.owner, claim.ttlMs, {
    kind: "acquired",
    lease,
    reentered: false,
    vacant: true,
  });
  const claimed = part(claimReply);
  const inputs =
    claimed[0] === REPLY.OK
      ? {
          claimId,
          sessionId,
          fencingToken: lease.fencingToken,
          inputs: pairs(claimed, 1, (meta, payload) => decodeInput(sessionId, meta, payload)),
        }
      : undefined;
  const snapshot = decodeSnapshot(sessionId, part(stateReply));
  // Marked only when the claim took exactly this input, so the turn is the one turnIdOf named.
  const markedTurnId = reply[6] === 1 ? claim.turnIdOf?.(inputId) : undefined;
  const tenantSpend = spendOf(claim, reply[7]);
  return {
    ...receipt,
    started: {
      lease,
      inputs,
      snapshot,
      ...(markedTurnId && { markedTurnId }),
      ...(tenantSpend && { tenantSpend }),
    },
  };
}

/** The spend the step read (-1: none read), in the claim's window. */
function spendOf(
  claim: TurnStartClaim,
  spent: unknown,
): { window: string; spent: number } | undefined {
  if (!claim.tenantSpend || typeof spent !== "number" || spent < 0) return undefined;
  return { window: claim.tenantSpend.window, spent };
}

/** A nested reply; an empty table comes back as an empty array. */
function part(reply: ScriptReply | undefined): ScriptReply {
  if (!Array.isArray(reply)) throw new Error("startTurn: malformed reply");
  return reply;
}
