// Sessions between tether.v1 messages and the domain: usage, snapshots, commits and receipts,
// both directions.
import { bindingOf, clientMetadata } from "../../domain/agent-binding.js";
import type { ParkedTurn } from "../../domain/parked-turns.js";
import { splitWaits } from "../../domain/parked-turns.js";
import { create } from "@bufbuild/protobuf";
import type { SessionExecutionLease } from "../../domain/lease.js";
import { ZERO_USAGE } from "../../domain/usage.js";
import type {
  CommitReceipt,
  RuntimeCommit,
  SessionSnapshot,
  TranscriptMark,
  UsageTotals,
} from "../../domain/session.js";
import type { CommitRequest } from "../../gen/tether/v1/lease_service_pb.js";
import { SessionSchema, type Session } from "../../gen/tether/v1/session_service_pb.js";
import {
  CommitReceiptSchema,
  SessionSnapshotSchema,
  TranscriptMarkSchema,
  UsageSchema,
  type CommitReceipt as CommitReceiptPb,
  type SessionSnapshot as SessionSnapshotPb,
  type TranscriptMark as TranscriptMarkPb,
  type Usage as UsagePb,
} from "../../gen/tether/v1/session_pb.js";
import { fenceFromProto, fenceToProto, leaseToProto } from "./lease.js";
import { inputCompletionFromProto, inputCompletionToProto } from "./inputs.js";
import { workCompletionFromProto, workCompletionToProto } from "./queue.js";
import { fromUint64, toUint64, type SessionIdMap } from "./scalars.js";

export function usageFromProto(pb: UsagePb | undefined, field: string): UsageTotals | undefined {
  if (pb === undefined) return undefined;
  return {
    inputTokens: fromUint64(pb.inputTokens, `${field}.input_tokens`),
    outputTokens: fromUint64(pb.outputTokens, `${field}.output_tokens`),
    cacheReadTokens: fromUint64(pb.cacheReadTokens, `${field}.cache_read_tokens`),
    cacheWriteTokens: fromUint64(pb.cacheWriteTokens, `${field}.cache_write_tokens`),
    reasoningTokens: fromUint64(pb.reasoningTokens, `${field}.reasoning_tokens`),
  };
}

export function usageToProto(u: UsageTotals, field = "usage", costMicros = 0): UsagePb {
  return create(UsageSchema, {
    costMicros: toUint64(costMicros, `${field}.cost_micros`),
    inputTokens: toUint64(u.inputTokens, `${field}.input_tokens`),
    outputTokens: toUint64(u.outputTokens, `${field}.output_tokens`),
    cacheReadTokens: toUint64(u.cacheReadTokens, `${field}.cache_read_tokens`),
    cacheWriteTokens: toUint64(u.cacheWriteTokens, `${field}.cache_write_tokens`),
    reasoningTokens: toUint64(u.reasoningTokens, `${field}.reasoning_tokens`),
  });
}

export function markToProto(mark: TranscriptMark | undefined): TranscriptMarkPb | undefined {
  if (!mark) return undefined;
  return create(TranscriptMarkSchema, {
    epoch: mark.epoch,
    messageCount: toUint64(mark.messageCount, "since.message_count"),
  });
}

export function markFromProto(
  pb: TranscriptMarkPb | undefined,
  field: string,
): TranscriptMark | undefined {
  if (!pb) return undefined;
  return { epoch: pb.epoch, messageCount: fromUint64(pb.messageCount, `${field}.message_count`) };
}

export function snapshotToProto(s: SessionSnapshot, ids: SessionIdMap): SessionSnapshotPb {
  return create(SessionSnapshotSchema, {
    sessionId: ids.toClient(s.sessionId),
    headRevision: BigInt(s.headRevision),
    turnIndex: BigInt(s.turnIndex),
    messages: s.messages,
    messagesFrom: toUint64(s.messagesFrom, "messages_from"),
    transcriptEpoch: s.transcriptEpoch,
    usage: usageToProto(s.usage, "usage", s.costMicros),
    metadata: s.metadata,
  });
}

export function snapshotFromProto(
  pb: SessionSnapshotPb | undefined,
  ids: SessionIdMap,
  field: string,
): SessionSnapshot | undefined {
  if (pb === undefined) return undefined;
  return {
    sessionId: ids.toStore(pb.sessionId, `${field}.session_id`),
    headRevision: fromUint64(pb.headRevision, `${field}.head_revision`),
    turnIndex: fromUint64(pb.turnIndex, `${field}.turn_index`),
    messages: [...pb.messages],
    messagesFrom: fromUint64(pb.messagesFrom, `${field}.messages_from`),
    transcriptEpoch: pb.transcriptEpoch,
    usage: usageFromProto(pb.usage, `${field}.usage`) ?? {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
    ...(pb.usage &&
      pb.usage.costMicros > 0n && {
        costMicros: fromUint64(pb.usage.costMicros, `${field}.usage.cost_micros`),
      }),
    metadata: { ...pb.metadata },
  };
}

/** The client-facing Session: committed state plus the live lease holder, if any. */
export function sessionToProto(
  s: Pick<
    SessionSnapshot,
    "sessionId" | "headRevision" | "turnIndex" | "usage" | "costMicros" | "metadata"
  >,
  lease: SessionExecutionLease | undefined,
  ids: SessionIdMap,
  parked?: ParkedTurn,
): Session {
  const binding = bindingOf(s.metadata);
  return create(SessionSchema, {
    ...(binding && {
      agent: { agentId: ids.toClient(binding.agentId), version: BigInt(binding.version) },
    }),
    ...(parked && {
      parkedTurn: {
        turnId: parked.turnId,
        ...splitWaits(parked.waitingOn),
        parkedAtMs: BigInt(parked.parkedAtMs),
        expiresAtMs: BigInt(parked.expiresAtMs),
      },
    }),
    sessionId: ids.toClient(s.sessionId),
    headRevision: BigInt(s.headRevision),
    turnIndex: BigInt(s.turnIndex),
    usage: usageToProto(s.usage, "usage", s.costMicros),
    metadata: clientMetadata(s.metadata),
    ...(lease ? { lease: leaseToProto(lease, ids) } : {}),
  });
}

export function receiptToProto(r: CommitReceipt, ids: SessionIdMap): CommitReceiptPb {
  return create(CommitReceiptSchema, {
    sessionId: ids.toClient(r.sessionId),
    headRevision: BigInt(r.headRevision),
    replayed: r.replayed,
  });
}

export function receiptFromProto(
  pb: CommitReceiptPb | undefined,
  ids: SessionIdMap,
): CommitReceipt {
  return {
    sessionId: ids.toStore(pb?.sessionId ?? "", "receipt.session_id"),
    headRevision: fromUint64(pb?.headRevision ?? 0n, "receipt.head_revision"),
    replayed: pb?.replayed ?? false,
  };
}

/**
 * Proto3 cannot tell an empty list from an absent one; the domain's optional fields are left out
 * when empty so the store sees the same commit the caller built.
 */
export function commitFromProto(req: CommitRequest, ids: SessionIdMap): RuntimeCommit {
  const commit: RuntimeCommit = {
    sessionId: ids.toStore(req.sessionId, "session_id"),
    expectedHeadRevision: fromUint64(req.expectedHeadRevision, "expected_head_revision"),
    appendMessages: [...req.appendMessages],
  };
  const usage = usageFromProto(req.usage, "usage");
  if (usage) commit.usage = usage;
  const cost = fromUint64(req.usage?.costMicros ?? 0n, "usage.cost_micros");
  if (cost > 0) commit.costMicros = cost;
  if (req.advanceTurn) commit.advanceTurn = true;
  if (Object.keys(req.metadataPatch).length > 0) commit.metadataPatch = { ...req.metadataPatch };
  if (req.stamp) {
    commit.stamp = { operationId: req.stamp.operationId, contentHash: req.stamp.contentHash };
  }
  if (req.releaseLease)
    commit.releaseLease = fenceFromProto(req.releaseLease, ids, "release_lease");
  if (req.completeQueueClaims.length > 0) {
    commit.completeQueueClaims = req.completeQueueClaims.map((c, i) =>
      workCompletionFromProto(c, ids, `complete_queue_claims[${i}]`),
    );
  }
  if (req.completeInputClaims.length > 0) {
    commit.completeInputClaims = req.completeInputClaims.map((c, i) =>
      inputCompletionFromProto(c, ids, `complete_input_claims[${i}]`),
    );
  }
  if (req.parkedTurnId !== "") commit.parkedTurnId = req.parkedTurnId;
  if (req.deferTurnInputs !== "") commit.deferTurnInputs = req.deferTurnInputs;
  return commit;
}

/** A commit's cost, checked under the store's own field name before the wire sees it. */
const costOf = (c: RuntimeCommit): number =>
  c.costMicros === undefined ? 0 : (toUint64(c.costMicros, "cost_micros"), c.costMicros);

/** The fields of a CommitRequest, for the wire client. */
export function commitToProto(c: RuntimeCommit, ids: SessionIdMap) {
  return {
    sessionId: ids.toClient(c.sessionId),
    expectedHeadRevision: toUint64(c.expectedHeadRevision, "expected_head_revision"),
    appendMessages: c.appendMessages,
    ...(c.usage || c.costMicros !== undefined
      ? { usage: usageToProto(c.usage ?? ZERO_USAGE, "usage", costOf(c)) }
      : {}),
    advanceTurn: c.advanceTurn ?? false,
    metadataPatch: c.metadataPatch ?? {},
    ...(c.stamp ? { stamp: { ...c.stamp } } : {}),
    ...(c.releaseLease ? { releaseLease: fenceToProto(c.releaseLease, ids, "release_lease") } : {}),
    completeQueueClaims: (c.completeQueueClaims ?? []).map((q, i) =>
      workCompletionToProto(q, ids, `complete_queue_claims[${i}]`),
    ),
    completeInputClaims: (c.completeInputClaims ?? []).map((q, i) =>
      inputCompletionToProto(q, ids, `complete_input_claims[${i}]`),
    ),
    parkedTurnId: c.parkedTurnId ?? "",
    deferTurnInputs: c.deferTurnInputs ?? "",
  };
}
