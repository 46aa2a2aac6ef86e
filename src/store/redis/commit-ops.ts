// Commits and committed state of the Redis store: one script applies a whole commit (stamp,
// head CAS, claim completions, lease release); loading is one read-only script.
import {
  commitStampConflict,
  headRevisionConflict,
  leaseExpired,
  parkedTurnMismatch,
  queuedWorkClaimSuperseded,
  turnInputClaimSuperseded,
} from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import type {
  CommitAnnouncement,
  CommitReceipt,
  FoldedOutboxClaim,
  SessionSnapshot,
  TranscriptMark,
} from "../../domain/session.js";
import { TOOL_CALL_RETENTION_MS } from "../../domain/tool-calls.js";
import { logClaimSuperseded } from "../shared/store-log.js";
import { metadataRefusal } from "../shared/metadata-limits.js";
import { int, str, usageAt } from "./codec.js";
import { endStatusOf, type TurnEndingCommit } from "../../domain/turn-records.js";
import { withReadyKey, type RedisContext } from "./context.js";
import { REPLY } from "./replies.js";
import type { TenantCommitCharges } from "../../domain/tenant-charges.js";
import type { ScriptReply } from "./scripts.js";
import { tenantOfOutbox } from "../../domain/webhooks.js";
import { decodeClaims } from "./webhook-ops.js";

function commitSpec(commit: TurnEndingCommit, logMaxEntries: number): string {
  const u = commit.usage;
  const metadata = Object.entries(commit.metadataPatch ?? {}).flat();
  return JSON.stringify({
    e: commit.expectedHeadRevision,
    op: commit.stamp?.operationId ?? "",
    h: commit.stamp?.contentHash ?? "",
    t: commit.advanceTurn === true,
    u: u
      ? [u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, u.reasoningTokens]
      : [0, 0, 0, 0, 0],
    r: commit.releaseLease
      ? [commit.releaseLease.leaseToken, commit.releaseLease.fencingToken]
      : [],
    q: (commit.completeQueueClaims ?? []).map((c) => [c.claimId, c.fencingToken, c.batchIds]),
    i: (commit.completeInputClaims ?? []).map((c) => [c.claimId, c.fencingToken, c.inputIds]),
    m: metadata,
    ...(commit.metadataLimits && {
      ml: [commit.metadataLimits.maxBytes, commit.metadataLimits.maxHistoryBytes],
    }),
    p: commit.parkedTurnId ?? "",
    f: commit.deferTurnInputs ?? "",
    c: commit.costMicros ?? 0,
    w: (commit.webhookEvents ?? []).map((event) => [event.id, JSON.stringify(event)]),
    a: announcementSpec(commit.announce, logMaxEntries),
    ...((commit.outboxFold || commit.webhookEvents?.length) && { wf: outboxFoldSpec(commit) }),
    ...(commit.tenantCharges && { tc: tenantChargesSpec(commit.tenantCharges) }),
    ...(commit.turnEnd && {
      te: [
        commit.turnEnd.turnId,
        endStatusOf(commit.turnEnd.outcome),
        JSON.stringify(commit.turnEnd.outcome),
      ],
    }),
  });
}

/**
 * The fold's `wf` as the script takes it (see commit-21-27.lua; webhooks folded in). Rows written
 * without a fold are listed in the hint due at once (an expect at 0), in the commit's step where
 * the index is on the outbox's server (ADR 0021 "The hint dropped in the settle"; Cluster: ignored).
 */
function outboxFoldSpec(commit: TurnEndingCommit): unknown[] {
  const fold = commit.outboxFold;
  if (!fold) return [0, 0, commit.sessionId, "", 0, 0];
  const claim = fold.claim;
  return [
    fold.nowMs,
    fold.dueAtMs,
    commit.sessionId,
    claim?.claimToken ?? "",
    claim?.leaseMs ?? 0,
    claim?.max ?? 0,
  ];
}

/** The tenant's charges as the script takes them (`tc`, ADR 0038). */
function tenantChargesSpec(c: TenantCommitCharges): unknown[] {
  return [c.releaseSlot ?? "", c.quotaTokens ?? 0, c.spend?.window ?? "", c.spend?.costMicros ?? 0];
}

/**
 * The tenant's keys after the ready index (KEYS[25..27], after the fold's two), where the commit carries charges. The
 * runtime sends charges only where chargesInCommit said yes, so never on Cluster (no ready key).
 */
function tenantKeys(ctx: RedisContext, charges: TenantCommitCharges | undefined): string[] {
  if (!charges || ctx.readyKey === undefined) return [];
  const q = ctx.quotaKeys(charges.tenant);
  return [q.slots, q.counters, ctx.tenantSpendKey(charges.tenant)];
}

/** The announcement as the script takes it (see commit-21-27.lua); [] for none. */
function announcementSpec(a: CommitAnnouncement | undefined, maxLen: number): unknown[] {
  if (!a) return [];
  const { leaseToken, fencingToken } = a.fence;
  return [
    leaseToken,
    fencingToken,
    a.turnId,
    a.eventJson,
    maxLen,
    a.releaseIfIdle,
    a.fence.sessionId,
    TOOL_CALL_RETENTION_MS,
    // The held events (ADR 0040), absent when none.
    ...(a.heldEventsJson?.length ? [a.heldEventsJson] : []),
  ];
}

export async function commit(ctx: RedisContext, input: TurnEndingCommit): Promise<CommitReceipt> {
  const sessionId = input.sessionId;
  const k = ctx.keys(sessionId);
  const ek = ctx.eventKeys(sessionId);
  const fold = ctx.outboxFoldKeys !== undefined && input.outboxFold !== undefined;
  const reply = await ctx.scripts.run(
    "commit",
    withReadyKey(ctx, [
      k.head,
      k.messages,
      k.metadata,
      k.stamps,
      k.lease,
      k.work,
      k.workIndex,
      k.inputs,
      k.inputIndex,
      k.parked,
      k.history,
      k.metadataLog,
      k.outbox,
      ek.events,
      ek.eventSeq,
      // The announced turn's signals, which the commit ends (none: keys it leaves alone).
      ek.activeTurn,
      ek.cancel(input.announce?.turnId ?? ""),
      ek.toolResults(input.announce?.turnId ?? ""),
      k.toolCalls(input.announce?.turnId ?? ""),
      k.turnRecords,
      k.turnOrder,
    ]).concat(
      // Webhooks folded into the commit (ADR 0021): after the ready index, standalone only.
      ctx.outboxFoldKeys?.(tenantOfOutbox(sessionId)) ?? [],
      // ---- Tenant limits in the commit's step (ADR 0038): KEYS[25..27], standalone only.
      tenantKeys(ctx, input.tenantCharges),
    ),
    [commitSpec(input, ctx.logMaxEntries), ...input.appendMessages],
  );
  switch (reply[0]) {
    case REPLY.OK:
      // A commit at head 0 created the session; any other repairs its entry if needed.
      ctx.noteSession(sessionId, input.expectedHeadRevision > 0);
      return {
        sessionId,
        headRevision: int(reply, 1),
        replayed: false,
        ...(input.announce && {
          announced: { seq: int(reply, 2), released: int(reply, 3) === 1, signalsCleared: true },
        }),
        ...(fold &&
          reply.length > 4 && { outbox: decodeFolded(reply[4] as unknown as ScriptReply, input) }),
      };
    case REPLY.LEASE_EXPIRED:
      throw leaseExpired(sessionId, input.announce?.fence.fencingToken ?? 0);
    case REPLY.QUOTA_REFUSED:
      throw metadataRefusal(input, str(reply, 1));
    case REPLY.STAMP_REPLAYED:
      return { sessionId, headRevision: int(reply, 1), replayed: true };
    case REPLY.STAMP_CONFLICT:
      throw commitStampConflict(sessionId, input.stamp?.operationId ?? "");
    case REPLY.HEAD_CONFLICT:
      throw headRevisionConflict(sessionId, input.expectedHeadRevision, int(reply, 1));
    case REPLY.QUEUE_CLAIM_SUPERSEDED: {
      const claimId = str(reply, 1);
      const claim = input.completeQueueClaims?.find((c) => c.claimId === claimId);
      logClaimSuperseded(ctx.log, sessionId, "queued_work", claimId, claim?.fencingToken);
      throw queuedWorkClaimSuperseded(sessionId, claimId);
    }
    case REPLY.PARKED_MISMATCH: {
      const parked = str(reply, 1);
      throw parkedTurnMismatch(input.parkedTurnId ?? "", parked === "" ? undefined : parked);
    }
    default: {
      const claimId = str(reply, 1);
      const claim = input.completeInputClaims?.find((c) => c.claimId === claimId);
      logClaimSuperseded(ctx.log, sessionId, "turn_input", claimId, claim?.fencingToken);
      throw turnInputClaimSuperseded(sessionId, claimId);
    }
  }
}

/** The fold's claim (commit-21-27.lua's fifth reply): the version, then claimOutbox's reply. */
function decodeFolded(folded: ScriptReply, input: TurnEndingCommit): FoldedOutboxClaim {
  const token = input.outboxFold?.claim?.claimToken ?? "";
  // decodeClaims reads claimOutbox's reply, whose R.OK this one's version stands in for.
  return {
    endpointsVersion: int(folded, 0),
    report: { claims: decodeClaims(folded, token), remaining: int(folded, 1) },
  };
}

export async function loadSession(
  ctx: RedisContext,
  sessionId: SessionId,
  since: TranscriptMark | undefined,
): Promise<SessionSnapshot | undefined> {
  const k = ctx.keys(sessionId);
  const reply = await ctx.scripts.run(
    "loadSession",
    [k.head, k.messages, k.metadata],
    [since?.epoch ?? "", since?.messageCount ?? 0],
  );
  return decodeSnapshot(sessionId, reply);
}

/** loadSession's reply (session_state in _session.lua) as a snapshot; undefined before a commit. */
export function decodeSnapshot(
  sessionId: SessionId,
  reply: ScriptReply,
): SessionSnapshot | undefined {
  if (reply[0] !== REPLY.OK) return undefined;
  const cost = int(reply, 10);
  const count = int(reply, 11);
  const first = 12;
  const messages: string[] = [];
  for (let i = 0; i < count; i++) messages.push(str(reply, first + i));
  const metadata: Record<string, string> = {};
  for (let i = first + count; i + 1 < reply.length; i += 2) {
    metadata[str(reply, i)] = str(reply, i + 1);
  }
  return {
    sessionId,
    headRevision: int(reply, 1),
    turnIndex: int(reply, 2),
    messages,
    messagesFrom: int(reply, 9),
    transcriptEpoch: str(reply, 8),
    usage: usageAt(reply, 3),
    ...(cost > 0 && { costMicros: cost }),
    metadata,
  };
}
