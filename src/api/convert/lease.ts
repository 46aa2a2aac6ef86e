// Lease owners, leases and fences between tether.v1 messages and the domain, both directions:
// the server reads requests and writes responses, the wire client does the reverse.
import { create } from "@bufbuild/protobuf";
import { invalidArgument } from "../../domain/errors.js";
import type {
  LeaseFence,
  LeaseOwner,
  LeaseOwnerLiveness,
  SessionExecutionLease,
} from "../../domain/lease.js";
import {
  LeaseFenceSchema,
  LeaseOwnerSchema,
  SessionExecutionLeaseSchema,
  type LeaseFence as LeaseFencePb,
  type LeaseOwner as LeaseOwnerPb,
  type LeaseOwnerLiveness as LeaseOwnerLivenessPb,
  type SessionExecutionLease as SessionExecutionLeasePb,
} from "../../gen/tether/v1/lease_pb.js";
import { fromInt64, fromUint64, required, toUint64, type SessionIdMap } from "./scalars.js";

function livenessFromProto(
  pb: LeaseOwnerLivenessPb | undefined,
  field: string,
): LeaseOwnerLiveness {
  const kind = pb?.kind;
  switch (kind?.case) {
    case "opaque":
      return { kind: "opaque" };
    case "localProcess":
      return {
        kind: "local_process",
        hostId: kind.value.hostId,
        bootId: kind.value.bootId,
        pid: kind.value.pid,
        processStart: kind.value.processStart,
      };
    default:
      throw invalidArgument(field, "must be opaque or local_process");
  }
}

export function ownerFromProto(pb: LeaseOwnerPb | undefined, field: string): LeaseOwner {
  const owner = required(pb, field);
  return {
    ownerId: owner.ownerId,
    incarnationId: owner.incarnationId,
    liveness: livenessFromProto(owner.liveness, `${field}.liveness`),
  };
}

export function ownerToProto(owner: LeaseOwner): LeaseOwnerPb {
  const live = owner.liveness;
  return create(LeaseOwnerSchema, {
    ownerId: owner.ownerId,
    incarnationId: owner.incarnationId,
    liveness: {
      kind:
        live.kind === "opaque"
          ? { case: "opaque", value: {} }
          : {
              case: "localProcess",
              value: {
                hostId: live.hostId,
                bootId: live.bootId,
                pid: live.pid,
                processStart: live.processStart,
              },
            },
    },
  });
}

export function fenceFromProto(
  pb: LeaseFencePb | undefined,
  ids: SessionIdMap,
  field: string,
): LeaseFence {
  const fence = required(pb, field);
  return {
    sessionId: ids.toStore(fence.sessionId, `${field}.session_id`),
    owner: ownerFromProto(fence.owner, `${field}.owner`),
    leaseToken: fence.leaseToken,
    fencingToken: fromUint64(fence.fencingToken, `${field}.fencing_token`),
  };
}

export function fenceToProto(fence: LeaseFence, ids: SessionIdMap, field: string): LeaseFencePb {
  return create(LeaseFenceSchema, {
    sessionId: ids.toClient(fence.sessionId),
    owner: ownerToProto(fence.owner),
    leaseToken: fence.leaseToken,
    fencingToken: toUint64(fence.fencingToken, `${field}.fencing_token`),
  });
}

export function leaseToProto(
  lease: SessionExecutionLease,
  ids: SessionIdMap,
): SessionExecutionLeasePb {
  return create(SessionExecutionLeaseSchema, {
    sessionId: ids.toClient(lease.sessionId),
    owner: ownerToProto(lease.owner),
    leaseToken: lease.leaseToken,
    fencingToken: BigInt(lease.fencingToken),
    expiresAtMs: BigInt(lease.expiresAtMs),
  });
}

export function leaseFromProto(
  pb: SessionExecutionLeasePb | undefined,
  ids: SessionIdMap,
  field: string,
): SessionExecutionLease {
  const lease = required(pb, field);
  return {
    sessionId: ids.toStore(lease.sessionId, `${field}.session_id`),
    owner: ownerFromProto(lease.owner, `${field}.owner`),
    leaseToken: lease.leaseToken,
    fencingToken: fromUint64(lease.fencingToken, `${field}.fencing_token`),
    expiresAtMs: fromInt64(lease.expiresAtMs, `${field}.expires_at_ms`),
  };
}
