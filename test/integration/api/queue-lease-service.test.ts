// Every QueueService and LeaseService RPC, through the in-memory router transport and through the
// real server: the happy path of each, and the status codes of the errors ADR 0003 fixes.
import { Code, createClient } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  ClaimByIdStatus,
  LeaseService,
  type ClaimLeaseResponse,
} from "../../../src/gen/tether/v1/lease_service_pb.js";
import { TurnCheckpoint } from "../../../src/gen/tether/v1/input_pb.js";
import {
  ClaimBoundary,
  DeliveryPolicy,
  QueuedWorkState,
  SlotPolicy,
  WorkClass,
} from "../../../src/gen/tether/v1/queue_pb.js";
import { CancelStatus, QueueService } from "../../../src/gen/tether/v1/queue_service_pb.js";
import { expectCode, TARGETS, violatedFields, type ApiTarget } from "../../support/api-clients.js";

const opaque = { kind: { case: "opaque" as const, value: {} } };
const ownerA = { ownerId: "worker-a", incarnationId: "a-1", liveness: opaque };
const ownerB = { ownerId: "worker-b", incarnationId: "b-1", liveness: opaque };

const draft = (sessionId: string, payload: string, sourceKey = "") => ({
  sessionId,
  workClass: WorkClass.TURN_WORK,
  deliveryPolicy: DeliveryPolicy.EARLIEST_SAFE_BOUNDARY,
  slotPolicy: SlotPolicy.EXCLUSIVE,
  payload,
  sourceKey,
});

function acquired(res: ClaimLeaseResponse) {
  if (res.result.case !== "acquired") throw new Error(`expected acquired, got ${res.result.case}`);
  const lease = res.result.value;
  return {
    lease,
    fence: {
      sessionId: lease.sessionId,
      owner: lease.owner,
      leaseToken: lease.leaseToken,
      fencingToken: lease.fencingToken,
    },
  };
}

describe.each(TARGETS)("QueueService and LeaseService via $name", ({ start }) => {
  let target: ApiTarget;
  beforeEach(async () => {
    target = await start();
  });
  afterEach(() => target.close());
  const queue = () => createClient(QueueService, target.transport);
  const leases = () => createClient(LeaseService, target.transport);

  test("EnqueueWork, ListWork and CancelWork; a repeated source key deduplicates", async () => {
    const first = await queue().enqueueWork({ draft: draft("q1", "one", "src-1") });
    expect(first.batch?.enqueueSeq).toBe(1n);
    expect(first.batch?.state).toBe(QueuedWorkState.READY);
    expect(first.batch?.sessionId).toBe("q1");
    const again = await queue().enqueueWork({ draft: draft("q1", "one", "src-1") });
    expect(again.deduplicated).toBe(true);
    expect(again.batch?.batchId).toBe(first.batch?.batchId);
    await expectCode(
      queue().enqueueWork({ draft: draft("q1", "other", "src-1") }),
      Code.AlreadyExists,
    );
    await queue().enqueueWork({ draft: draft("q1", "two") });
    expect((await queue().listWork({ sessionId: "q1" })).batches.map((b) => b.payload)).toEqual([
      "one",
      "two",
    ]);
    const cancelled = await queue().cancelWork({
      sessionId: "q1",
      batchIds: [first.batch?.batchId ?? "", "missing"],
    });
    expect(cancelled.outcomes.map((o) => o.status)).toEqual([
      CancelStatus.CANCELLED,
      CancelStatus.NOT_FOUND,
    ]);
  });

  test("unspecified and unknown enum values are INVALID_ARGUMENT naming the field", async () => {
    const unspecified = await expectCode(
      queue().enqueueWork({ draft: { ...draft("q2", "x"), workClass: WorkClass.UNSPECIFIED } }),
      Code.InvalidArgument,
    );
    expect(violatedFields(unspecified)).toEqual(["draft.work_class"]);
    const unknown = await expectCode(
      queue().enqueueWork({ draft: { ...draft("q2", "x"), slotPolicy: 42 as SlotPolicy } }),
      Code.InvalidArgument,
    );
    expect(violatedFields(unknown)).toEqual(["draft.slot_policy"]);
    const missing = await expectCode(queue().enqueueWork({}), Code.InvalidArgument);
    expect(violatedFields(missing)).toEqual(["draft"]);
  });

  test("SubmitInput, ListInputs and CancelInputs by ids and by suffix", async () => {
    const nextTurn = { kind: { case: "nextTurn" as const, value: {} } };
    const ids: string[] = [];
    for (const payload of ["i1", "i2", "i3"]) {
      const res = await queue().submitInput({ sessionId: "in1", delivery: nextTurn, payload });
      ids.push(res.input?.inputId ?? "");
    }
    expect((await queue().listInputs({ sessionId: "in1" })).inputs.map((i) => i.seq)).toEqual([
      1n,
      2n,
      3n,
    ]);
    const one = await queue().cancelInputs({
      sessionId: "in1",
      selector: { case: "inputIds", value: { ids: [ids[0] ?? ""] } },
    });
    expect(one.outcomes.map((o) => o.status)).toEqual([CancelStatus.CANCELLED]);
    const suffix = await queue().cancelInputs({
      sessionId: "in1",
      selector: { case: "fromInputId", value: ids[1] ?? "" },
    });
    expect(suffix.outcomes.map((o) => o.status)).toEqual([
      CancelStatus.CANCELLED,
      CancelStatus.CANCELLED,
    ]);
    await expectCode(queue().cancelInputs({ sessionId: "in1" }), Code.InvalidArgument);
    const noDelivery = await expectCode(
      queue().submitInput({ sessionId: "in1", payload: "x" }),
      Code.InvalidArgument,
    );
    expect(violatedFields(noDelivery)).toEqual(["delivery"]);
  });

  test("ClaimLease acquires, re-enters, and reports busy; GetLease, RenewLease and ReleaseLease", async () => {
    const { lease, fence } = acquired(
      await leases().claimLease({ sessionId: "l1", owner: ownerA, ttlMs: 10_000n }),
    );
    // The server's manual clock starts at 1_700_000_000_000 ms: a first token is the clock (ADR 0022).
    expect(lease.fencingToken).toBe(1_700_000_000_000n);
    const again = await leases().claimLease({ sessionId: "l1", owner: ownerA, ttlMs: 10_000n });
    expect(again.reentered).toBe(true);
    const busy = await leases().claimLease({ sessionId: "l1", owner: ownerB, ttlMs: 10_000n });
    expect(busy.result.case).toBe("busy");
    expect(busy.result.value?.owner?.ownerId).toBe("worker-a");
    expect((await leases().getLease({ sessionId: "l1" })).lease?.leaseToken).toBe(lease.leaseToken);

    target.clock.advance(5_000);
    const renewed = await leases().renewLease({ fence, ttlMs: 10_000n });
    expect(renewed.lease?.expiresAtMs).toBe(lease.expiresAtMs + 5_000n);
    expect((await leases().releaseLease({ fence })).released).toBe(true);
    expect((await leases().releaseLease({ fence })).released).toBe(false);
    expect((await leases().getLease({ sessionId: "l1" })).lease).toBeUndefined();
    // A stale fence: the caller must re-acquire (ADR 0003).
    await expectCode(leases().renewLease({ fence, ttlMs: 1_000n }), Code.FailedPrecondition);
    const negative = await expectCode(
      leases().claimLease({ sessionId: "l1", owner: ownerA, ttlMs: 86_400_001n }),
      Code.InvalidArgument,
    );
    expect(violatedFields(negative)).toEqual(["ttl_ms"]);
  });

  test("ReclaimLease takes over an expired holder with a higher fencing token", async () => {
    const first = acquired(
      await leases().claimLease({ sessionId: "r1", owner: ownerA, ttlMs: 1_000n }),
    );
    const early = await leases().reclaimLease({
      sessionId: "r1",
      claimant: ownerB,
      observed: first.fence,
      ttlMs: 1_000n,
    });
    expect(early.result.case).toBe("busy");
    target.clock.advance(2_000);
    const late = await leases().reclaimLease({
      sessionId: "r1",
      claimant: ownerB,
      observed: first.fence,
      ttlMs: 1_000n,
    });
    expect(late.result.case).toBe("acquired");
    // The clock moved 2 s past the first token (1_700_000_000_000), so the next token is the clock.
    expect(late.result.value?.fencingToken).toBe(1_700_000_002_000n);
  });

  test("ClaimReadyWork, ClaimWorkByIds and a fenced Commit settle the work; a superseded claim is ABORTED", async () => {
    const a = await queue().enqueueWork({ draft: draft("w1", "a") });
    const b = await queue().enqueueWork({ draft: draft("w1", "b") });
    const held = acquired(
      await leases().claimLease({ sessionId: "w1", owner: ownerA, ttlMs: 1_000n }),
    );
    const ready = await leases().claimReadyWork({
      fence: held.fence,
      boundary: ClaimBoundary.IDLE,
      maxBatches: 5,
    });
    expect(ready.claim?.batches.map((x) => x.payload)).toEqual(["a"]);
    const byIds = await leases().claimWorkByIds({
      fence: held.fence,
      batchIds: [b.batch?.batchId ?? ""],
    });
    expect(byIds.outcomes.map((o) => o.status)).toEqual([ClaimByIdStatus.CLAIMED_NOW]);
    await expectCode(
      leases().claimWorkByIds({ fence: held.fence, batchIds: ["ghost"] }),
      Code.NotFound,
    );

    const receipt = await leases().commit({
      sessionId: "w1",
      // The first batch created the session at revision 1.
      expectedHeadRevision: 1n,
      appendMessages: ["done a"],
      completeQueueClaims: [
        {
          claimId: ready.claim?.claimId ?? "",
          sessionId: "w1",
          fencingToken: held.lease.fencingToken,
          batchIds: [a.batch?.batchId ?? ""],
        },
      ],
      releaseLease: held.fence,
    });
    expect(receipt.receipt?.headRevision).toBe(2n);
    await expectCode(
      leases().commit({ sessionId: "w1", expectedHeadRevision: 1n, appendMessages: [] }),
      Code.Aborted,
    );

    // A successor generation takes b over; the old claim's completion is superseded.
    const next = acquired(
      await leases().claimLease({ sessionId: "w1", owner: ownerB, ttlMs: 1_000n }),
    );
    const retaken = await leases().claimReadyWork({
      fence: next.fence,
      boundary: ClaimBoundary.IDLE,
      maxBatches: 5,
    });
    expect(retaken.claim?.batches.map((x) => x.payload)).toEqual(["b"]);
    await expectCode(
      leases().commit({
        sessionId: "w1",
        expectedHeadRevision: 2n,
        appendMessages: [],
        completeQueueClaims: [
          {
            claimId: byIds.claim?.claimId ?? "",
            sessionId: "w1",
            fencingToken: held.lease.fencingToken,
            batchIds: [b.batch?.batchId ?? ""],
          },
        ],
      }),
      Code.Aborted,
    );
    const loaded = await leases().loadSession({ sessionId: "w1" });
    expect(loaded.snapshot?.messages).toEqual(["done a"]);
    const vacuum = await leases().vacuum({ sessionId: "w1" });
    expect(vacuum.removedBatches).toBe(1);
  });

  test("ClaimInputs at idle and at a checkpoint; DeferActiveInputs moves missed steers once", async () => {
    await queue().submitInput({
      sessionId: "ci1",
      delivery: { kind: { case: "nextTurn", value: {} } },
      payload: "next",
    });
    const steer = {
      kind: {
        case: "activeTurn" as const,
        value: { turnId: "t1", minBoundary: TurnCheckpoint.BEFORE_COMPLETION },
      },
    };
    await queue().submitInput({ sessionId: "ci1", delivery: steer, payload: "steer" });
    await queue().submitInput({ sessionId: "ci1", delivery: steer, payload: "missed" });
    const held = acquired(
      await leases().claimLease({ sessionId: "ci1", owner: ownerA, ttlMs: 1_000n }),
    );
    const idle = await leases().claimInputs({ fence: held.fence, maxInputs: 10 });
    expect(idle.claim?.inputs.map((i) => i.payload)).toEqual(["next"]);
    const early = await leases().claimInputs({
      fence: held.fence,
      turnId: "t1",
      checkpoint: TurnCheckpoint.AFTER_WORK,
      maxInputs: 10,
    });
    expect(early.claim).toBeUndefined();
    const atEnd = await leases().claimInputs({
      fence: held.fence,
      turnId: "t1",
      checkpoint: TurnCheckpoint.BEFORE_COMPLETION,
      maxInputs: 1,
    });
    expect(atEnd.claim?.inputs.map((i) => i.payload)).toEqual(["steer"]);
    const deferred = await leases().deferActiveInputs({ fence: held.fence, turnId: "t1" });
    expect(deferred.deferredInputIds).toHaveLength(1);
    expect(
      (await leases().deferActiveInputs({ fence: held.fence, turnId: "t1" })).deferredInputIds,
    ).toEqual([]);
    await expectCode(
      leases().claimInputs({ fence: held.fence, turnId: "t1", maxInputs: 1 }),
      Code.InvalidArgument,
    );
  });
});
