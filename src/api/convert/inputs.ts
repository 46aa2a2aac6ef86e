// Pending turn inputs between tether.v1 messages and the domain: deliveries, inputs, claims,
// completions and claim points, both directions.
import { create } from "@bufbuild/protobuf";
import { invalidArgument } from "../../domain/errors.js";
import type { ClaimId, InputId } from "../../domain/ids.js";
import type {
  InputClaimPoint,
  InputDelivery,
  PendingTurnInput,
  TurnCheckpoint,
  TurnInputClaim,
  TurnInputClaimCompletion,
  TurnInputState,
} from "../../domain/inputs.js";
import {
  InputDeliverySchema,
  PendingTurnInputSchema,
  TurnCheckpoint as TurnCheckpointPb,
  TurnInputClaimCompletionSchema,
  TurnInputState as TurnInputStatePb,
  type InputDelivery as InputDeliveryPb,
  type PendingTurnInput as PendingTurnInputPb,
  type TurnInputClaimCompletion as TurnInputClaimCompletionPb,
} from "../../gen/tether/v1/input_pb.js";
import {
  TurnInputClaimSchema,
  type TurnInputClaim as TurnInputClaimPb,
} from "../../gen/tether/v1/lease_service_pb.js";
import { createEnumTable, fromUint64, required, toUint64, type SessionIdMap } from "./scalars.js";

export const checkpoints = createEnumTable<TurnCheckpointPb, TurnCheckpoint>([
  [TurnCheckpointPb.AFTER_WORK, "after_work"],
  [TurnCheckpointPb.BEFORE_COMPLETION, "before_completion"],
]);
export const inputStates = createEnumTable<TurnInputStatePb, TurnInputState>([
  [TurnInputStatePb.PENDING, "pending"],
  [TurnInputStatePb.CLAIMED, "claimed"],
  [TurnInputStatePb.COMPLETED, "completed"],
  [TurnInputStatePb.CANCELLED, "cancelled"],
]);

export function deliveryFromProto(pb: InputDeliveryPb | undefined, field: string): InputDelivery {
  const kind = pb?.kind;
  switch (kind?.case) {
    case "nextTurn":
      return { kind: "next_turn" };
    case "activeTurn":
      return {
        kind: "active_turn",
        turnId: kind.value.turnId,
        minBoundary: checkpoints.fromProto(kind.value.minBoundary, `${field}.min_boundary`),
      };
    default:
      throw invalidArgument(field, "must be next_turn or active_turn");
  }
}

export function deliveryToProto(delivery: InputDelivery): InputDeliveryPb {
  return create(InputDeliverySchema, {
    kind:
      delivery.kind === "next_turn"
        ? { case: "nextTurn", value: {} }
        : {
            case: "activeTurn",
            value: {
              turnId: delivery.turnId,
              minBoundary: checkpoints.toProto(delivery.minBoundary),
            },
          },
  });
}

export function inputToProto(input: PendingTurnInput, ids: SessionIdMap): PendingTurnInputPb {
  return create(PendingTurnInputSchema, {
    inputId: input.inputId,
    sessionId: ids.toClient(input.sessionId),
    seq: BigInt(input.seq),
    delivery: deliveryToProto(input.delivery),
    sourceKey: input.sourceKey,
    payload: input.payload,
    state: inputStates.toProto(input.state),
    claimFencingToken: BigInt(input.claimFencingToken),
    claimId: input.claimId,
    deferred: input.deferred,
    ...(input.trace !== undefined && { trace: input.trace }),
  });
}

export function inputFromProto(
  pb: PendingTurnInputPb | undefined,
  ids: SessionIdMap,
  field: string,
): PendingTurnInput {
  const i = required(pb, field);
  return {
    inputId: i.inputId as InputId,
    sessionId: ids.toStore(i.sessionId, `${field}.session_id`),
    seq: fromUint64(i.seq, `${field}.seq`),
    delivery: deliveryFromProto(i.delivery, `${field}.delivery`),
    sourceKey: i.sourceKey,
    payload: i.payload,
    state: inputStates.fromProto(i.state, `${field}.state`),
    claimFencingToken: fromUint64(i.claimFencingToken, `${field}.claim_fencing_token`),
    claimId: i.claimId,
    deferred: i.deferred,
    ...(i.trace !== undefined && i.trace !== "" && { trace: i.trace }),
  };
}

export function inputClaimToProto(claim: TurnInputClaim, ids: SessionIdMap): TurnInputClaimPb {
  return create(TurnInputClaimSchema, {
    claimId: claim.claimId,
    sessionId: ids.toClient(claim.sessionId),
    fencingToken: BigInt(claim.fencingToken),
    inputs: claim.inputs.map((i) => inputToProto(i, ids)),
  });
}

export function inputClaimFromProto(
  pb: TurnInputClaimPb | undefined,
  ids: SessionIdMap,
  field: string,
): TurnInputClaim | undefined {
  if (pb === undefined) return undefined;
  return {
    claimId: pb.claimId as ClaimId,
    sessionId: ids.toStore(pb.sessionId, `${field}.session_id`),
    fencingToken: fromUint64(pb.fencingToken, `${field}.fencing_token`),
    inputs: pb.inputs.map((i, n) => inputFromProto(i, ids, `${field}.inputs[${n}]`)),
  };
}

export function inputCompletionFromProto(
  pb: TurnInputClaimCompletionPb,
  ids: SessionIdMap,
  field: string,
): TurnInputClaimCompletion {
  return {
    claimId: pb.claimId as ClaimId,
    sessionId: ids.toStore(pb.sessionId, `${field}.session_id`),
    fencingToken: fromUint64(pb.fencingToken, `${field}.fencing_token`),
    inputIds: pb.inputIds as InputId[],
  };
}

export function inputCompletionToProto(
  c: TurnInputClaimCompletion,
  ids: SessionIdMap,
  field: string,
): TurnInputClaimCompletionPb {
  return create(TurnInputClaimCompletionSchema, {
    claimId: c.claimId,
    sessionId: ids.toClient(c.sessionId),
    fencingToken: toUint64(c.fencingToken, `${field}.fencing_token`),
    inputIds: c.inputIds,
  });
}

/** An empty turn id means idle; otherwise the checkpoint is required. */
export function claimPointFromProto(turnId: string, checkpoint: TurnCheckpointPb): InputClaimPoint {
  if (turnId === "") return { kind: "idle" };
  return {
    kind: "checkpoint",
    turnId,
    checkpoint: checkpoints.fromProto(checkpoint, "checkpoint"),
  };
}

export function claimPointToProto(point: InputClaimPoint): {
  turnId: string;
  checkpoint: TurnCheckpointPb;
} {
  return point.kind === "idle"
    ? { turnId: "", checkpoint: TurnCheckpointPb.UNSPECIFIED }
    : { turnId: point.turnId, checkpoint: checkpoints.toProto(point.checkpoint) };
}
