// Parked turns between tether.v1 messages and the domain, both directions.
import { create } from "@bufbuild/protobuf";
import type { BatchId, InputId } from "../../domain/ids.js";
import type {
  ParkTurnDraft,
  ParkedTurn,
  ParkedTurnStatus,
  ResumeOutcome,
} from "../../domain/parked-turns.js";
import { invalidArgument } from "../../domain/errors.js";
import {
  ParkedTurnSchema,
  type ParkTurnRequest,
  type ParkedTurn as ParkedTurnPb,
  type ResumeTurnResponse,
} from "../../gen/tether/v1/lease_service_pb.js";
import { inputClaimFromProto, inputClaimToProto } from "./inputs.js";
import { workClaimFromProto, workClaimToProto } from "./queue.js";
import { waitFromWire, waitToWire } from "./tool-calls.js";
import { fromInt64, fromUint64, required, toUint64, type SessionIdMap } from "./scalars.js";

export function parkedToProto(p: ParkedTurn, ids: SessionIdMap): ParkedTurnPb {
  return create(ParkedTurnSchema, {
    sessionId: ids.toClient(p.sessionId),
    turnId: p.turnId,
    waitingOn: p.waitingOn.map(waitToWire),
    progress: p.progress,
    inputIds: p.inputIds,
    batchIds: p.batchIds,
    parkedAtMs: BigInt(p.parkedAtMs),
    expiresAtMs: BigInt(p.expiresAtMs),
    fencingToken: BigInt(p.fencingToken),
    cancelRequested: p.cancelRequested,
  });
}

export function parkedFromProto(pb: ParkedTurnPb, ids: SessionIdMap, field: string): ParkedTurn {
  return {
    sessionId: ids.toStore(pb.sessionId, `${field}.session_id`),
    turnId: pb.turnId,
    waitingOn: pb.waitingOn.map(waitFromWire),
    progress: pb.progress,
    inputIds: pb.inputIds as InputId[],
    batchIds: pb.batchIds as BatchId[],
    parkedAtMs: fromInt64(pb.parkedAtMs, `${field}.parked_at_ms`),
    expiresAtMs: fromInt64(pb.expiresAtMs, `${field}.expires_at_ms`),
    fencingToken: fromUint64(pb.fencingToken, `${field}.fencing_token`),
    cancelRequested: pb.cancelRequested,
  };
}

export function parkDraftFromProto(req: ParkTurnRequest): ParkTurnDraft {
  return {
    turnId: req.turnId,
    waitingOn: req.waitingOn.map(waitFromWire),
    progress: req.progress,
    inputIds: req.inputIds as InputId[],
    batchIds: req.batchIds as BatchId[],
    ttlMs: fromUint64(req.ttlMs, "ttl_ms"),
  };
}

export function parkDraftToProto(draft: ParkTurnDraft) {
  return {
    ...draft,
    waitingOn: draft.waitingOn.map(waitToWire),
    ttlMs: toUint64(draft.ttlMs, "ttl_ms"),
  };
}

const STATUSES: readonly ParkedTurnStatus[] = ["waiting", "answered", "cancelled", "expired"];

export function resumeToProto(outcome: ResumeOutcome | undefined, ids: SessionIdMap) {
  if (!outcome) return {};
  return {
    parked: parkedToProto(outcome.parked, ids),
    status: outcome.status,
    ...(outcome.status !== "waiting" && outcome.inputClaim
      ? { inputClaim: inputClaimToProto(outcome.inputClaim, ids) }
      : {}),
    ...(outcome.status !== "waiting" && outcome.workClaim
      ? { workClaim: workClaimToProto(outcome.workClaim, ids) }
      : {}),
  };
}

export function resumeFromProto(
  res: ResumeTurnResponse,
  ids: SessionIdMap,
): ResumeOutcome | undefined {
  if (!res.parked) return undefined;
  const parked = parkedFromProto(required(res.parked, "parked"), ids, "parked");
  const status = STATUSES.find((s) => s === res.status);
  if (status === undefined) throw invalidArgument("status", `unknown status ${res.status}`);
  if (status === "waiting") return { status, parked };
  return {
    status,
    parked,
    inputClaim: inputClaimFromProto(res.inputClaim, ids, "input_claim"),
    workClaim: workClaimFromProto(res.workClaim, ids, "work_claim"),
  };
}
