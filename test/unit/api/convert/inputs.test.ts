// Pending turn inputs: deliveries, inputs, claims, completions and claim points, domain → proto →
// bytes → proto → domain, with the edge values and the refusals naming the field.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  claimPointFromProto,
  claimPointToProto,
  deliveryFromProto,
  deliveryToProto,
  inputClaimFromProto,
  inputClaimToProto,
  inputCompletionFromProto,
  inputCompletionToProto,
  inputFromProto,
  inputToProto,
} from "../../../../src/api/convert/inputs.js";
import type { ClaimId, InputId, SessionId } from "../../../../src/domain/ids.js";
import type {
  InputClaimPoint,
  InputDelivery,
  PendingTurnInput,
  TurnInputClaim,
  TurnInputClaimCompletion,
} from "../../../../src/domain/inputs.js";
import {
  InputDeliverySchema,
  PendingTurnInputSchema,
  TurnCheckpoint,
  TurnInputClaimCompletionSchema,
  TurnInputState,
} from "../../../../src/gen/tether/v1/input_pb.js";
import { TurnInputClaimSchema } from "../../../../src/gen/tether/v1/lease_service_pb.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire, tenant } from "./support.js";

const sid = (id: string) => id as SessionId;

describe("InputDelivery", () => {
  test.each([
    [{ kind: "next_turn" }],
    [{ kind: "active_turn", turnId: "turn-1", minBoundary: "after_work" }],
    [{ kind: "active_turn", turnId: "", minBoundary: "before_completion" }],
  ] satisfies [InputDelivery][])("round-trips %o", (delivery) => {
    const wire = overTheWire(InputDeliverySchema, deliveryToProto(delivery));
    expect(deliveryFromProto(wire, "delivery")).toEqual(delivery);
  });

  test("an absent or empty delivery, or an UNSPECIFIED boundary, is refused naming the field", () => {
    expectRefusal(() => deliveryFromProto(undefined, "delivery"), "delivery");
    expectRefusal(() => deliveryFromProto(create(InputDeliverySchema), "delivery"), "delivery");
    const steer = create(InputDeliverySchema, {
      kind: { case: "activeTurn", value: { turnId: "t" } },
    });
    expectRefusal(() => deliveryFromProto(steer, "delivery"), "delivery.min_boundary");
  });
});

const input = (over: Partial<PendingTurnInput> = {}): PendingTurnInput => ({
  inputId: "in-1" as InputId,
  sessionId: sid("t1:s"),
  seq: 0,
  delivery: { kind: "next_turn" },
  sourceKey: "",
  payload: "",
  state: "pending",
  claimFencingToken: 0,
  claimId: "",
  deferred: false,
  ...over,
});

describe("PendingTurnInput", () => {
  test.each(["pending", "claimed", "completed", "cancelled"] as const)(
    "round-trips a %s input with the largest counters",
    (state) => {
      const i = input({
        state,
        seq: MAX_SAFE,
        claimFencingToken: MAX_SAFE,
        claimId: "c",
        sourceKey: "k",
        payload: '{"text":"hi"}',
        deferred: true,
        delivery: { kind: "active_turn", turnId: "turn-1", minBoundary: "before_completion" },
      });
      const wire = overTheWire(PendingTurnInputSchema, inputToProto(i, tenant));
      expect(wire.sessionId).toBe("s");
      expect(inputFromProto(wire, tenant, "input")).toEqual(i);
    },
  );

  test("round-trips the submitter's trace beside the payload; an input without one has none", () => {
    const traced = input({
      payload: "plain text",
      trace: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    });
    const wire = overTheWire(PendingTurnInputSchema, inputToProto(traced, tenant));
    expect(wire.payload).toBe("plain text");
    expect(inputFromProto(wire, tenant, "input")).toEqual(traced);
    const bare = overTheWire(PendingTurnInputSchema, inputToProto(input(), tenant));
    expect(bare.trace).toBeUndefined();
    expect(inputFromProto(bare, tenant, "input")).not.toHaveProperty("trace");
  });

  test("round-trips the zero input (sequence 0, empty strings, never claimed)", () => {
    const wire = overTheWire(PendingTurnInputSchema, inputToProto(input(), tenant));
    expect(wire.state).toBe(TurnInputState.PENDING);
    expect(inputFromProto(wire, tenant, "input")).toEqual(input());
  });

  test("bad input is refused naming the field", () => {
    const good = inputToProto(input(), tenant);
    expectRefusal(() => inputFromProto(undefined, tenant, "inputs[0]"), "inputs[0]");
    expectRefusal(
      () => inputFromProto({ ...good, seq: MAX_UINT64 }, tenant, "inputs[0]"),
      "inputs[0].seq",
    );
    expectRefusal(
      () => inputFromProto({ ...good, state: TurnInputState.UNSPECIFIED }, tenant, "inputs[0]"),
      "inputs[0].state",
    );
    expectRefusal(
      () => inputFromProto({ ...good, delivery: undefined }, tenant, "inputs[0]"),
      "inputs[0].delivery",
    );
    expectRefusal(
      () => inputFromProto({ ...good, claimFencingToken: MAX_UINT64 }, tenant, "inputs[0]"),
      "inputs[0].claim_fencing_token",
    );
  });
});

describe("TurnInputClaim and its completion", () => {
  test("a claim round-trips with inputs and without", () => {
    for (const inputs of [[input(), input({ inputId: "in-2" as InputId, seq: 1 })], []]) {
      const claim: TurnInputClaim = {
        claimId: "c-1" as ClaimId,
        sessionId: sid("t1:s"),
        fencingToken: MAX_SAFE,
        inputs,
      };
      const wire = overTheWire(TurnInputClaimSchema, inputClaimToProto(claim, tenant));
      expect(inputClaimFromProto(wire, tenant, "claim")).toEqual(claim);
    }
    expect(inputClaimFromProto(undefined, tenant, "claim")).toBeUndefined();
  });

  test("a bad input inside a claim is refused naming its index", () => {
    const pb = create(TurnInputClaimSchema, {
      claimId: "c",
      sessionId: "s",
      inputs: [
        inputToProto(input(), tenant),
        { ...inputToProto(input(), tenant), state: 9 as TurnInputState },
      ],
    });
    expectRefusal(() => inputClaimFromProto(pb, tenant, "claim"), "claim.inputs[1].state");
  });

  test("a completion round-trips, no input ids included", () => {
    for (const inputIds of [["in-1"], []] as InputId[][]) {
      const c: TurnInputClaimCompletion = {
        claimId: "c" as ClaimId,
        sessionId: sid("t1:s"),
        fencingToken: MAX_SAFE,
        inputIds,
      };
      const wire = overTheWire(
        TurnInputClaimCompletionSchema,
        inputCompletionToProto(c, tenant, "complete"),
      );
      expect(inputCompletionFromProto(wire, tenant, "complete")).toEqual(c);
    }
    expectRefusal(
      () =>
        inputCompletionToProto(
          { claimId: "c" as ClaimId, sessionId: sid("t1:s"), fencingToken: 0.5, inputIds: [] },
          tenant,
          "complete_input_claims[0]",
        ),
      "complete_input_claims[0].fencing_token",
    );
  });
});

describe("InputClaimPoint", () => {
  test.each([
    [{ kind: "idle" }, { turnId: "", checkpoint: TurnCheckpoint.UNSPECIFIED }],
    [
      { kind: "checkpoint", turnId: "turn-1", checkpoint: "after_work" },
      { turnId: "turn-1", checkpoint: TurnCheckpoint.AFTER_WORK },
    ],
    [
      { kind: "checkpoint", turnId: "turn-1", checkpoint: "before_completion" },
      { turnId: "turn-1", checkpoint: TurnCheckpoint.BEFORE_COMPLETION },
    ],
  ] satisfies [InputClaimPoint, { turnId: string; checkpoint: TurnCheckpoint }][])(
    "%o round-trips as %o",
    (point, wire) => {
      expect(claimPointToProto(point)).toEqual(wire);
      expect(claimPointFromProto(wire.turnId, wire.checkpoint)).toEqual(point);
    },
  );

  test("an empty turn id is idle whatever the checkpoint; a turn without a checkpoint is refused", () => {
    expect(claimPointFromProto("", TurnCheckpoint.BEFORE_COMPLETION)).toEqual({ kind: "idle" });
    expectRefusal(() => claimPointFromProto("turn-1", TurnCheckpoint.UNSPECIFIED), "checkpoint");
  });
});
