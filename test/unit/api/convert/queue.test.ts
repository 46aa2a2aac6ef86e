// Queued work: drafts, batches, claims, completions and cancel outcomes, domain → proto → bytes →
// proto → domain, every enum value through its table, and UNSPECIFIED refused naming the field.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  batchFromProto,
  batchToProto,
  cancelReportFromProto,
  cancelReportToProto,
  claimBoundaries,
  claimByIdStatuses,
  draftFromProto,
  draftToProto,
  workClaimFromProto,
  workClaimToProto,
  workCompletionFromProto,
  workCompletionToProto,
} from "../../../../src/api/convert/queue.js";
import { PASS_THROUGH_IDS } from "../../../../src/api/convert/scalars.js";
import type { BatchId, ClaimId, SessionId } from "../../../../src/domain/ids.js";
import type {
  CancelReport,
  QueuedWorkBatch,
  QueuedWorkClaim,
  QueuedWorkClaimCompletion,
  QueuedWorkDraft,
} from "../../../../src/domain/queue.js";
import { ClaimByIdStatus } from "../../../../src/gen/tether/v1/lease_service_pb.js";
import {
  ClaimBoundary,
  DeliveryPolicy,
  QueuedWorkBatchSchema,
  QueuedWorkClaimCompletionSchema,
  QueuedWorkClaimSchema,
  QueuedWorkDraftSchema,
  QueuedWorkState,
  SlotPolicy,
  WorkClass,
} from "../../../../src/gen/tether/v1/queue_pb.js";
import {
  CancelOutcomeSchema,
  CancelStatus,
} from "../../../../src/gen/tether/v1/queue_service_pb.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire, tenant } from "./support.js";

const sid = (id: string) => id as SessionId;

describe("QueuedWorkDraft", () => {
  test.each([
    [
      "with keys",
      {
        sessionId: sid("t1:q"),
        workClass: "session_command",
        deliveryPolicy: "earliest_safe_boundary",
        slotPolicy: "join",
        mergeKey: "m",
        sourceKey: "src-1",
        payload: "p",
      },
    ],
    [
      "without keys, empty payload",
      {
        sessionId: sid("t1:q"),
        workClass: "turn_work",
        deliveryPolicy: "after_current_turn_commit",
        slotPolicy: "exclusive",
        payload: "",
      },
    ],
  ] satisfies [string, QueuedWorkDraft][])("round-trips %s", (_name, draft) => {
    const wire = overTheWire(QueuedWorkDraftSchema, draftToProto(draft, tenant));
    expect(wire.sessionId).toBe("q");
    expect(draftFromProto(wire, tenant, "draft")).toEqual(draft);
  });

  test("the wire carries the enum numbers", () => {
    const pb = draftToProto(
      {
        sessionId: sid("q"),
        workClass: "turn_work",
        deliveryPolicy: "after_current_turn_commit",
        slotPolicy: "exclusive",
        payload: "",
      },
      PASS_THROUGH_IDS,
    );
    expect([pb.workClass, pb.deliveryPolicy, pb.slotPolicy]).toEqual([
      WorkClass.TURN_WORK,
      DeliveryPolicy.AFTER_CURRENT_TURN_COMMIT,
      SlotPolicy.EXCLUSIVE,
    ]);
  });

  test("an absent draft, a bad session id or an UNSPECIFIED enum is refused naming the field", () => {
    const good = {
      sessionId: "q",
      workClass: WorkClass.TURN_WORK,
      deliveryPolicy: DeliveryPolicy.EARLIEST_SAFE_BOUNDARY,
      slotPolicy: SlotPolicy.JOIN,
    };
    const from = (init: Partial<typeof good>) =>
      draftFromProto(create(QueuedWorkDraftSchema, { ...good, ...init }), tenant, "draft");
    expectRefusal(() => draftFromProto(undefined, tenant, "draft"), "draft");
    expectRefusal(() => from({ sessionId: "" }), "draft.session_id");
    expectRefusal(() => from({ workClass: WorkClass.UNSPECIFIED }), "draft.work_class");
    expectRefusal(
      () => from({ deliveryPolicy: DeliveryPolicy.UNSPECIFIED }),
      "draft.delivery_policy",
    );
    expectRefusal(() => from({ slotPolicy: SlotPolicy.UNSPECIFIED }), "draft.slot_policy");
    expectRefusal(() => from({ slotPolicy: 42 as SlotPolicy }), "draft.slot_policy");
  });
});

const batch = (over: Partial<QueuedWorkBatch> = {}): QueuedWorkBatch => ({
  batchId: "b-1" as BatchId,
  sessionId: sid("t1:q"),
  enqueueSeq: MAX_SAFE,
  workClass: "session_command",
  deliveryPolicy: "earliest_safe_boundary",
  slotPolicy: "join",
  mergeKey: "",
  sourceKey: "",
  payload: "",
  state: "ready",
  claimFencingToken: 0,
  claimId: "",
  ...over,
});

describe("QueuedWorkBatch", () => {
  test.each(["ready", "claimed", "completed", "cancelled"] as const)(
    "round-trips a %s batch",
    (state) => {
      const b = batch({ state, claimFencingToken: MAX_SAFE, claimId: "c", mergeKey: "m" });
      const wire = overTheWire(QueuedWorkBatchSchema, batchToProto(b, tenant));
      expect(batchFromProto(wire, tenant, "batch")).toEqual(b);
    },
  );

  test("round-trips a never-claimed batch with sequence 0 and empty strings", () => {
    const b = batch({ enqueueSeq: 0 });
    const wire = overTheWire(QueuedWorkBatchSchema, batchToProto(b, tenant));
    expect(wire.state).toBe(QueuedWorkState.READY);
    expect(batchFromProto(wire, tenant, "batch")).toEqual(b);
  });

  test("bad input is refused naming the field", () => {
    const good = batchToProto(batch(), tenant);
    expectRefusal(() => batchFromProto(undefined, tenant, "batches[0]"), "batches[0]");
    expectRefusal(
      () => batchFromProto({ ...good, enqueueSeq: MAX_UINT64 }, tenant, "batches[0]"),
      "batches[0].enqueue_seq",
    );
    expectRefusal(
      () => batchFromProto({ ...good, state: QueuedWorkState.UNSPECIFIED }, tenant, "batches[0]"),
      "batches[0].state",
    );
    expectRefusal(
      () => batchFromProto({ ...good, claimFencingToken: MAX_UINT64 }, tenant, "batches[0]"),
      "batches[0].claim_fencing_token",
    );
  });
});

describe("QueuedWorkClaim", () => {
  test("round-trips a claim with batches, and one with none", () => {
    for (const batches of [[batch(), batch({ batchId: "b-2" as BatchId, state: "claimed" })], []]) {
      const claim: QueuedWorkClaim = {
        claimId: "c-1" as ClaimId,
        sessionId: sid("t1:q"),
        fencingToken: MAX_SAFE,
        batches,
      };
      const wire = overTheWire(QueuedWorkClaimSchema, workClaimToProto(claim, tenant));
      expect(workClaimFromProto(wire, tenant, "claim")).toEqual(claim);
    }
  });

  test("no claim stays no claim; a bad batch is refused naming its index", () => {
    expect(workClaimFromProto(undefined, tenant, "claim")).toBeUndefined();
    const pb = create(QueuedWorkClaimSchema, {
      claimId: "c",
      sessionId: "q",
      batches: [batchToProto(batch(), tenant), { ...batchToProto(batch(), tenant), workClass: 0 }],
    });
    expectRefusal(() => workClaimFromProto(pb, tenant, "claim"), "claim.batches[1].work_class");
  });
});

describe("QueuedWorkClaimCompletion", () => {
  test("round-trips, no batch ids included", () => {
    for (const batchIds of [["b-1", "b-2"], []] as BatchId[][]) {
      const c: QueuedWorkClaimCompletion = {
        claimId: "c" as ClaimId,
        sessionId: sid("t1:q"),
        fencingToken: 0,
        batchIds,
      };
      const wire = overTheWire(
        QueuedWorkClaimCompletionSchema,
        workCompletionToProto(c, tenant, "complete"),
      );
      expect(workCompletionFromProto(wire, tenant, "complete")).toEqual(c);
    }
  });
});

describe("cancel outcomes and claim enums", () => {
  test("every cancel status round-trips, in order", () => {
    const report: CancelReport<BatchId> = {
      outcomes: (
        [
          "cancelled",
          "already_claimed",
          "already_completed",
          "already_cancelled",
          "not_found",
        ] as const
      ).map((status, i) => ({ id: `b-${i}` as BatchId, status })),
    };
    const wire = cancelReportToProto(report).map((o) => overTheWire(CancelOutcomeSchema, o));
    expect(wire.map((o) => o.status)).toEqual([
      CancelStatus.CANCELLED,
      CancelStatus.ALREADY_CLAIMED,
      CancelStatus.ALREADY_COMPLETED,
      CancelStatus.ALREADY_CANCELLED,
      CancelStatus.NOT_FOUND,
    ]);
    expect(cancelReportFromProto<BatchId>(wire, "outcomes")).toEqual(report);
    expect(cancelReportFromProto([], "outcomes")).toEqual({ outcomes: [] });
  });

  test("an UNSPECIFIED cancel status is refused naming its index", () => {
    const outcomes = [
      create(CancelOutcomeSchema, { id: "a", status: CancelStatus.CANCELLED }),
      create(CancelOutcomeSchema, { id: "b" }),
    ];
    expectRefusal(() => cancelReportFromProto(outcomes, "outcomes"), "outcomes[1].status");
  });

  test("claim boundaries and claim-by-id statuses map both ways and refuse UNSPECIFIED", () => {
    expect(claimBoundaries.fromProto(ClaimBoundary.IDLE, "boundary")).toBe("idle");
    expect(claimBoundaries.fromProto(ClaimBoundary.ACTIVE_TURN_CHECKPOINT, "boundary")).toBe(
      "active_turn_checkpoint",
    );
    expect(claimBoundaries.toProto("active_turn_checkpoint")).toBe(
      ClaimBoundary.ACTIVE_TURN_CHECKPOINT,
    );
    expectRefusal(
      () => claimBoundaries.fromProto(ClaimBoundary.UNSPECIFIED, "boundary"),
      "boundary",
    );
    expect(claimByIdStatuses.toProto("claimed_now")).toBe(ClaimByIdStatus.CLAIMED_NOW);
    expect(claimByIdStatuses.fromProto(ClaimByIdStatus.ALREADY_SATISFIED, "status")).toBe(
      "already_satisfied",
    );
    expectRefusal(
      () => claimByIdStatuses.fromProto(ClaimByIdStatus.UNSPECIFIED, "outcomes[0].status"),
      "outcomes[0].status",
    );
  });
});
