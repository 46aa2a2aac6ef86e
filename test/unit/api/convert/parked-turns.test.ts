// Parked turns: the record, the park request and the resume outcome, domain → proto → bytes →
// proto → domain under the tenant's id map, with literal wire values and the refusals naming
// the field.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  parkDraftFromProto,
  parkDraftToProto,
  parkedFromProto,
  parkedToProto,
  resumeFromProto,
  resumeToProto,
} from "../../../../src/api/convert/parked-turns.js";
import type { BatchId, ClaimId, InputId, SessionId } from "../../../../src/domain/ids.js";
import type {
  ParkTurnDraft,
  ParkedTurn,
  ResumeOutcome,
} from "../../../../src/domain/parked-turns.js";
import {
  ParkTurnRequestSchema,
  ParkedTurnSchema,
  ResumeTurnResponseSchema,
} from "../../../../src/gen/tether/v1/lease_service_pb.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire, tenant } from "./support.js";

const parked: ParkedTurn = {
  sessionId: "t1:s-1" as SessionId,
  turnId: "turn-7",
  waitingOn: [
    { kind: "result", callId: "call-1" },
    { kind: "approval", callId: "call-2" },
  ],
  progress: '{"v":1}',
  inputIds: ["in-1" as InputId],
  batchIds: ["b-1" as BatchId, "b-2" as BatchId],
  parkedAtMs: 1_700_000_000_000,
  expiresAtMs: MAX_SAFE,
  fencingToken: 42,
  cancelRequested: true,
};

describe("ParkedTurn", () => {
  test("carries every field, the session id in the client's form", () => {
    const wire = overTheWire(ParkedTurnSchema, parkedToProto(parked, tenant));
    expect(wire).toMatchObject({
      sessionId: "s-1",
      turnId: "turn-7",
      waitingOn: ["call-1", "approve:call-2"],
      progress: '{"v":1}',
      inputIds: ["in-1"],
      batchIds: ["b-1", "b-2"],
      parkedAtMs: 1_700_000_000_000n,
      expiresAtMs: 9007199254740991n,
      fencingToken: 42n,
      cancelRequested: true,
    });
    expect(parkedFromProto(wire, tenant, "parked")).toEqual(parked);
  });

  test("a bad session id or a number past the safe range is refused naming the field", () => {
    const wire = () => create(ParkedTurnSchema, parkedToProto(parked, tenant));
    expectRefusal(
      () => parkedFromProto({ ...wire(), sessionId: "" }, tenant, "parked"),
      "parked.session_id",
    );
    expectRefusal(
      () => parkedFromProto({ ...wire(), parkedAtMs: -(2n ** 60n) }, tenant, "parked"),
      "parked.parked_at_ms",
    );
    expectRefusal(
      () => parkedFromProto({ ...wire(), expiresAtMs: 2n ** 60n }, tenant, "parked"),
      "parked.expires_at_ms",
    );
    expectRefusal(
      () => parkedFromProto({ ...wire(), fencingToken: MAX_UINT64 }, tenant, "parked"),
      "parked.fencing_token",
    );
  });
});

describe("ParkTurnRequest", () => {
  const draft: ParkTurnDraft = {
    turnId: "turn-7",
    waitingOn: [
      { kind: "approval", callId: "call-1" },
      { kind: "result", callId: "call-1" },
    ],
    progress: "p",
    inputIds: ["in-1" as InputId],
    batchIds: [],
    ttlMs: 86_400_000,
  };

  test("the draft round-trips, its TTL as a uint64 and its waits in the wire's strings", () => {
    const wire = overTheWire(
      ParkTurnRequestSchema,
      create(ParkTurnRequestSchema, parkDraftToProto(draft)),
    );
    expect(wire.ttlMs).toBe(86_400_000n);
    expect(wire.waitingOn).toEqual(["approve:call-1", "call-1"]);
    expect(wire.fence).toBeUndefined();
    expect(parkDraftFromProto(wire)).toEqual(draft);
  });

  test("a TTL that is no safe count is refused naming ttl_ms, both ways", () => {
    expectRefusal(() => parkDraftToProto({ ...draft, ttlMs: -1 }), "ttl_ms");
    expectRefusal(() => parkDraftToProto({ ...draft, ttlMs: 1.5 }), "ttl_ms");
    expectRefusal(
      () => parkDraftFromProto(create(ParkTurnRequestSchema, { turnId: "t", ttlMs: MAX_UINT64 })),
      "ttl_ms",
    );
  });
});

describe("ResumeTurnResponse", () => {
  const inputClaim = {
    claimId: "c-in" as ClaimId,
    sessionId: "t1:s-1" as SessionId,
    fencingToken: 43,
    inputs: [],
  };
  const workClaim = {
    claimId: "c-work" as ClaimId,
    sessionId: "t1:s-1" as SessionId,
    fencingToken: 43,
    batches: [],
  };
  const roundTrip = (outcome: ResumeOutcome | undefined) =>
    resumeFromProto(
      overTheWire(
        ResumeTurnResponseSchema,
        create(ResumeTurnResponseSchema, resumeToProto(outcome, tenant)),
      ),
      tenant,
    );

  test.each([
    [{ status: "waiting", parked }],
    [{ status: "answered", parked, inputClaim, workClaim }],
    [{ status: "cancelled", parked, inputClaim: undefined, workClaim }],
    [{ status: "expired", parked, inputClaim, workClaim: undefined }],
    [{ status: "answered", parked, inputClaim: undefined, workClaim: undefined }],
  ] satisfies [ResumeOutcome][])("round-trips %o", (outcome) => {
    expect(roundTrip(outcome)).toEqual(outcome);
  });

  test("no parked turn is an empty response, and an empty response is none", () => {
    expect(resumeToProto(undefined, tenant)).toEqual({});
    expect(roundTrip(undefined)).toBeUndefined();
  });

  test("the status travels as its name, the claims with client session ids", () => {
    const wire = create(
      ResumeTurnResponseSchema,
      resumeToProto({ status: "answered", parked, inputClaim, workClaim }, tenant),
    );
    expect(wire.status).toBe("answered");
    expect(wire.parked?.sessionId).toBe("s-1");
    expect(wire.inputClaim?.sessionId).toBe("s-1");
    expect(wire.workClaim?.claimId).toBe("c-work");
  });

  test("an unknown status or a bad parked record is refused naming the field", () => {
    const good = () =>
      create(ResumeTurnResponseSchema, resumeToProto({ status: "waiting", parked }, tenant));
    const unknown = expectRefusal(
      () => resumeFromProto({ ...good(), status: "parked" }, tenant),
      "status",
    );
    expect(unknown.violations[0]?.description).toBe("unknown status parked");
    const badParked = good();
    if (badParked.parked) badParked.parked.fencingToken = MAX_UINT64;
    expectRefusal(() => resumeFromProto(badParked, tenant), "parked.fencing_token");
  });
});
