// Owners, fences and leases: domain → proto → bytes → proto → domain, for the server's id map
// (tenant-scoped) and the wire client's (ids as they are), with the edge values of each field.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  fenceFromProto,
  fenceToProto,
  leaseFromProto,
  leaseToProto,
  ownerFromProto,
  ownerToProto,
} from "../../../../src/api/convert/lease.js";
import { PASS_THROUGH_IDS } from "../../../../src/api/convert/scalars.js";
import type { SessionId } from "../../../../src/domain/ids.js";
import type {
  LeaseFence,
  LeaseOwner,
  SessionExecutionLease,
} from "../../../../src/domain/lease.js";
import {
  LeaseFenceSchema,
  LeaseOwnerSchema,
  SessionExecutionLeaseSchema,
} from "../../../../src/gen/tether/v1/lease_pb.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire, tenant } from "./support.js";

const sid = (id: string) => id as SessionId;

const opaque: LeaseOwner = { ownerId: "", incarnationId: "", liveness: { kind: "opaque" } };
const local: LeaseOwner = {
  ownerId: "worker-1",
  incarnationId: "inc-7",
  liveness: {
    kind: "local_process",
    hostId: "host-a",
    bootId: "boot-b",
    pid: 4294967295,
    processStart: "18446744073709551615",
  },
};

describe("LeaseOwner", () => {
  test.each([
    ["opaque, empty ids", opaque],
    ["local_process, largest pid", local],
    [
      "local_process, pid 0 and empty strings",
      {
        ownerId: "o",
        incarnationId: "i",
        liveness: { kind: "local_process", hostId: "", bootId: "", pid: 0, processStart: "" },
      } satisfies LeaseOwner,
    ],
  ])("%s round-trips", (_name, owner) => {
    const wire = overTheWire(LeaseOwnerSchema, ownerToProto(owner));
    expect(ownerFromProto(wire, "owner")).toEqual(owner);
  });

  test("the wire form names the liveness case", () => {
    const pb = ownerToProto(local);
    expect(pb.liveness?.kind.case).toBe("localProcess");
    expect(ownerToProto(opaque).liveness?.kind.case).toBe("opaque");
  });

  test("an absent owner or liveness is refused naming the field", () => {
    expectRefusal(() => ownerFromProto(undefined, "owner"), "owner");
    expectRefusal(
      () => ownerFromProto(create(LeaseOwnerSchema, { ownerId: "o" }), "fence.owner"),
      "fence.owner.liveness",
    );
    expectRefusal(
      () => ownerFromProto(create(LeaseOwnerSchema, { ownerId: "o", liveness: {} }), "owner"),
      "owner.liveness",
    );
  });
});

describe("LeaseFence", () => {
  const fence: LeaseFence = {
    sessionId: sid("t1:s-1"),
    owner: local,
    leaseToken: "tok",
    fencingToken: MAX_SAFE,
  };

  test("round-trips through the server's tenant scope, the session id losing its prefix on the wire", () => {
    const wire = overTheWire(LeaseFenceSchema, fenceToProto(fence, tenant, "fence"));
    expect(wire.sessionId).toBe("s-1");
    expect(wire.fencingToken).toBe(9007199254740991n);
    expect(fenceFromProto(wire, tenant, "fence")).toEqual(fence);
  });

  test("round-trips through the wire client's ids, fencing token 0 and empty token included", () => {
    const zero: LeaseFence = {
      sessionId: sid("s"),
      owner: opaque,
      leaseToken: "",
      fencingToken: 0,
    };
    const wire = overTheWire(LeaseFenceSchema, fenceToProto(zero, PASS_THROUGH_IDS, "fence"));
    expect(fenceFromProto(wire, PASS_THROUGH_IDS, "fence")).toEqual(zero);
  });

  test("bad input is refused naming the field", () => {
    expectRefusal(() => fenceFromProto(undefined, tenant, "release_lease"), "release_lease");
    const good = fenceToProto(fence, tenant, "fence");
    expectRefusal(
      () => fenceFromProto({ ...good, fencingToken: MAX_UINT64 }, tenant, "fence"),
      "fence.fencing_token",
    );
    expectRefusal(
      () => fenceFromProto({ ...good, sessionId: "a:b" }, tenant, "fence"),
      "fence.session_id",
    );
    expectRefusal(
      () => fenceFromProto({ ...good, sessionId: "" }, tenant, "fence"),
      "fence.session_id",
    );
    expectRefusal(
      () => fenceFromProto({ ...good, owner: undefined }, tenant, "fence"),
      "fence.owner",
    );
    expectRefusal(
      () => fenceToProto({ ...fence, fencingToken: -1 }, tenant, "fence"),
      "fence.fencing_token",
    );
  });
});

describe("SessionExecutionLease", () => {
  test.each([
    ["largest values", MAX_SAFE, MAX_SAFE],
    ["zero", 0, 0],
    ["expiry before the epoch (int64)", 1, -1],
  ])("round-trips with %s", (_name, fencingToken, expiresAtMs) => {
    const lease: SessionExecutionLease = {
      sessionId: sid("t1:s-1"),
      owner: local,
      leaseToken: "tok",
      fencingToken,
      expiresAtMs,
    };
    const wire = overTheWire(SessionExecutionLeaseSchema, leaseToProto(lease, tenant));
    expect(leaseFromProto(wire, tenant, "lease")).toEqual(lease);
  });

  test("bad input is refused naming the field", () => {
    expectRefusal(() => leaseFromProto(undefined, PASS_THROUGH_IDS, "lease"), "lease");
    const pb = create(SessionExecutionLeaseSchema, {
      sessionId: "s",
      owner: ownerToProto(opaque),
      fencingToken: MAX_UINT64,
    });
    expectRefusal(() => leaseFromProto(pb, PASS_THROUGH_IDS, "lease"), "lease.fencing_token");
    const late = create(SessionExecutionLeaseSchema, {
      sessionId: "s",
      owner: ownerToProto(opaque),
      expiresAtMs: 9223372036854775807n,
    });
    expectRefusal(() => leaseFromProto(late, PASS_THROUGH_IDS, "lease"), "lease.expires_at_ms");
  });
});
