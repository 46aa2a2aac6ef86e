// Queued work between tether.v1 messages and the domain: drafts, batches, claims, completions,
// boundaries and cancel outcomes, both directions.
import { create } from "@bufbuild/protobuf";
import type { BatchId, ClaimId } from "../../domain/ids.js";
import type {
  CancelReport,
  CancelStatus,
  ClaimBoundary,
  ClaimByIdStatus,
  DeliveryPolicy,
  QueuedWorkBatch,
  QueuedWorkClaim,
  QueuedWorkClaimCompletion,
  QueuedWorkClass,
  QueuedWorkDraft,
  QueuedWorkState,
  SlotPolicy,
} from "../../domain/queue.js";
import {
  ClaimBoundary as ClaimBoundaryPb,
  DeliveryPolicy as DeliveryPolicyPb,
  QueuedWorkBatchSchema,
  QueuedWorkClaimCompletionSchema,
  QueuedWorkClaimSchema,
  QueuedWorkDraftSchema,
  QueuedWorkState as QueuedWorkStatePb,
  SlotPolicy as SlotPolicyPb,
  WorkClass as WorkClassPb,
  type QueuedWorkBatch as QueuedWorkBatchPb,
  type QueuedWorkClaim as QueuedWorkClaimPb,
  type QueuedWorkClaimCompletion as QueuedWorkClaimCompletionPb,
  type QueuedWorkDraft as QueuedWorkDraftPb,
} from "../../gen/tether/v1/queue_pb.js";
import { ClaimByIdStatus as ClaimByIdStatusPb } from "../../gen/tether/v1/lease_service_pb.js";
import {
  CancelOutcomeSchema,
  CancelStatus as CancelStatusPb,
  type CancelOutcome as CancelOutcomePb,
} from "../../gen/tether/v1/queue_service_pb.js";
import {
  createEnumTable,
  fromUint64,
  optionalText,
  required,
  toUint64,
  type SessionIdMap,
} from "./scalars.js";

export const workClasses = createEnumTable<WorkClassPb, QueuedWorkClass>([
  [WorkClassPb.SESSION_COMMAND, "session_command"],
  [WorkClassPb.TURN_WORK, "turn_work"],
]);
export const deliveryPolicies = createEnumTable<DeliveryPolicyPb, DeliveryPolicy>([
  [DeliveryPolicyPb.EARLIEST_SAFE_BOUNDARY, "earliest_safe_boundary"],
  [DeliveryPolicyPb.AFTER_CURRENT_TURN_COMMIT, "after_current_turn_commit"],
]);
export const slotPolicies = createEnumTable<SlotPolicyPb, SlotPolicy>([
  [SlotPolicyPb.JOIN, "join"],
  [SlotPolicyPb.EXCLUSIVE, "exclusive"],
]);
export const claimBoundaries = createEnumTable<ClaimBoundaryPb, ClaimBoundary>([
  [ClaimBoundaryPb.IDLE, "idle"],
  [ClaimBoundaryPb.ACTIVE_TURN_CHECKPOINT, "active_turn_checkpoint"],
]);
export const workStates = createEnumTable<QueuedWorkStatePb, QueuedWorkState>([
  [QueuedWorkStatePb.READY, "ready"],
  [QueuedWorkStatePb.CLAIMED, "claimed"],
  [QueuedWorkStatePb.COMPLETED, "completed"],
  [QueuedWorkStatePb.CANCELLED, "cancelled"],
]);
export const claimByIdStatuses = createEnumTable<ClaimByIdStatusPb, ClaimByIdStatus>([
  [ClaimByIdStatusPb.CLAIMED_NOW, "claimed_now"],
  [ClaimByIdStatusPb.ALREADY_SATISFIED, "already_satisfied"],
]);
export const cancelStatuses = createEnumTable<CancelStatusPb, CancelStatus>([
  [CancelStatusPb.CANCELLED, "cancelled"],
  [CancelStatusPb.ALREADY_CLAIMED, "already_claimed"],
  [CancelStatusPb.ALREADY_COMPLETED, "already_completed"],
  [CancelStatusPb.ALREADY_CANCELLED, "already_cancelled"],
  [CancelStatusPb.NOT_FOUND, "not_found"],
]);

export function draftFromProto(
  pb: QueuedWorkDraftPb | undefined,
  ids: SessionIdMap,
  field: string,
): QueuedWorkDraft {
  const draft = required(pb, field);
  const mergeKey = optionalText(draft.mergeKey);
  const sourceKey = optionalText(draft.sourceKey);
  return {
    sessionId: ids.toStore(draft.sessionId, `${field}.session_id`),
    workClass: workClasses.fromProto(draft.workClass, `${field}.work_class`),
    deliveryPolicy: deliveryPolicies.fromProto(draft.deliveryPolicy, `${field}.delivery_policy`),
    slotPolicy: slotPolicies.fromProto(draft.slotPolicy, `${field}.slot_policy`),
    ...(mergeKey === undefined ? {} : { mergeKey }),
    ...(sourceKey === undefined ? {} : { sourceKey }),
    payload: draft.payload,
  };
}

export function draftToProto(draft: QueuedWorkDraft, ids: SessionIdMap): QueuedWorkDraftPb {
  return create(QueuedWorkDraftSchema, {
    sessionId: ids.toClient(draft.sessionId),
    workClass: workClasses.toProto(draft.workClass),
    deliveryPolicy: deliveryPolicies.toProto(draft.deliveryPolicy),
    slotPolicy: slotPolicies.toProto(draft.slotPolicy),
    mergeKey: draft.mergeKey ?? "",
    sourceKey: draft.sourceKey ?? "",
    payload: draft.payload,
  });
}

export function batchToProto(batch: QueuedWorkBatch, ids: SessionIdMap): QueuedWorkBatchPb {
  return create(QueuedWorkBatchSchema, {
    batchId: batch.batchId,
    sessionId: ids.toClient(batch.sessionId),
    enqueueSeq: BigInt(batch.enqueueSeq),
    workClass: workClasses.toProto(batch.workClass),
    deliveryPolicy: deliveryPolicies.toProto(batch.deliveryPolicy),
    slotPolicy: slotPolicies.toProto(batch.slotPolicy),
    mergeKey: batch.mergeKey,
    sourceKey: batch.sourceKey,
    payload: batch.payload,
    state: workStates.toProto(batch.state),
    claimFencingToken: BigInt(batch.claimFencingToken),
    claimId: batch.claimId,
  });
}

export function batchFromProto(
  pb: QueuedWorkBatchPb | undefined,
  ids: SessionIdMap,
  field: string,
): QueuedWorkBatch {
  const b = required(pb, field);
  return {
    batchId: b.batchId as BatchId,
    sessionId: ids.toStore(b.sessionId, `${field}.session_id`),
    enqueueSeq: fromUint64(b.enqueueSeq, `${field}.enqueue_seq`),
    workClass: workClasses.fromProto(b.workClass, `${field}.work_class`),
    deliveryPolicy: deliveryPolicies.fromProto(b.deliveryPolicy, `${field}.delivery_policy`),
    slotPolicy: slotPolicies.fromProto(b.slotPolicy, `${field}.slot_policy`),
    mergeKey: b.mergeKey,
    sourceKey: b.sourceKey,
    payload: b.payload,
    state: workStates.fromProto(b.state, `${field}.state`),
    claimFencingToken: fromUint64(b.claimFencingToken, `${field}.claim_fencing_token`),
    claimId: b.claimId,
  };
}

export function workClaimToProto(claim: QueuedWorkClaim, ids: SessionIdMap): QueuedWorkClaimPb {
  return create(QueuedWorkClaimSchema, {
    claimId: claim.claimId,
    sessionId: ids.toClient(claim.sessionId),
    fencingToken: BigInt(claim.fencingToken),
    batches: claim.batches.map((b) => batchToProto(b, ids)),
  });
}

export function workClaimFromProto(
  pb: QueuedWorkClaimPb | undefined,
  ids: SessionIdMap,
  field: string,
): QueuedWorkClaim | undefined {
  if (pb === undefined) return undefined;
  return {
    claimId: pb.claimId as ClaimId,
    sessionId: ids.toStore(pb.sessionId, `${field}.session_id`),
    fencingToken: fromUint64(pb.fencingToken, `${field}.fencing_token`),
    batches: pb.batches.map((b, i) => batchFromProto(b, ids, `${field}.batches[${i}]`)),
  };
}

export function workCompletionFromProto(
  pb: QueuedWorkClaimCompletionPb,
  ids: SessionIdMap,
  field: string,
): QueuedWorkClaimCompletion {
  return {
    claimId: pb.claimId as ClaimId,
    sessionId: ids.toStore(pb.sessionId, `${field}.session_id`),
    fencingToken: fromUint64(pb.fencingToken, `${field}.fencing_token`),
    batchIds: pb.batchIds as BatchId[],
  };
}

export function workCompletionToProto(
  c: QueuedWorkClaimCompletion,
  ids: SessionIdMap,
  field: string,
): QueuedWorkClaimCompletionPb {
  return create(QueuedWorkClaimCompletionSchema, {
    claimId: c.claimId,
    sessionId: ids.toClient(c.sessionId),
    fencingToken: toUint64(c.fencingToken, `${field}.fencing_token`),
    batchIds: c.batchIds,
  });
}

export function cancelReportToProto(report: CancelReport<string>): CancelOutcomePb[] {
  return report.outcomes.map((o) =>
    create(CancelOutcomeSchema, { id: o.id, status: cancelStatuses.toProto(o.status) }),
  );
}

export function cancelReportFromProto<Id extends string>(
  outcomes: CancelOutcomePb[],
  field: string,
): CancelReport<Id> {
  return {
    outcomes: outcomes.map((o, i) => ({
      id: o.id as Id,
      status: cancelStatuses.fromProto(o.status, `${field}[${i}].status`),
    })),
  };
}
