// Parked turns: a holder parks a turn that waits only for outside answers (the lease is released
// in the same step), answers land first-writer-wins from anyone, and a later holder resumes the
// turn with a strictly greater fencing token, taking over its claims; the turn commits at most
// once. Every law runs on memory, Redis, Redis Cluster and the wire.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { inputClaimCompletion, type TurnInputClaim } from "../../../src/domain/inputs.js";
import { fenceOf, type LeaseFence } from "../../../src/domain/lease.js";
import type { ParkTurnDraft } from "../../../src/domain/parked-turns.js";
import type { ToolWait } from "../../../src/domain/tool-calls.js";
import { queueClaimCompletion, type QueuedWorkClaim } from "../../../src/domain/queue.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  activeTurn,
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const TURN = "turn-parked";
const answer = (callId: string, output = `out-${callId}`) => ({ callId, output, isError: false });
const result = (callId: string): ToolWait => ({ kind: "result", callId });
const approval = (callId: string): ToolWait => ({ kind: "approval", callId });

/** Settles both waits of `draft`: c1's result and c2's approval. */
async function settleBoth(store: RuntimeStore, sid: SessionId): Promise<void> {
  await store.answerToolCalls(sid, TURN, [answer("c1")]);
  await store.decideApprovals(sid, TURN, [{ callId: "c2", approve: true, reason: "ok" }]);
}

interface Running {
  sid: SessionId;
  fence: LeaseFence;
  inputs: TurnInputClaim;
  work: QueuedWorkClaim;
}

/** A holder running TURN: one input and one batch claimed. */
async function running(store: RuntimeStore): Promise<Running> {
  const sid = freshSessionId();
  await store.submitInput(inputDraft(sid, "question"));
  await store.enqueueWork(workDraft(sid, "work"));
  const fence = fenceOf(await acquire(store, sid, opaqueOwner("parker"), LONG_TTL_MS));
  const inputs = await store.claimInputs(fence, { kind: "idle" }, 1);
  const work = await store.claimReadyWork(fence, "idle", 1);
  if (!inputs || !work) throw new Error("seeding claimed nothing");
  return { sid, fence, inputs, work };
}

function draft(r: Running, extra: Partial<ParkTurnDraft> = {}): ParkTurnDraft {
  return {
    turnId: TURN,
    waitingOn: [result("c1"), approval("c2")],
    progress: '{"step":1}',
    inputIds: r.inputs.inputs.map((i) => i.inputId),
    batchIds: r.work.batches.map((b) => b.batchId),
    ttlMs: LONG_TTL_MS,
    ...extra,
  };
}

async function resumer(store: RuntimeStore, sid: SessionId, name = "resumer") {
  return fenceOf(await acquire(store, sid, opaqueOwner(name), LONG_TTL_MS));
}

export function describeParkedTurnLaws(factory: StoreFactory): void {
  describe("parked turns", () => {
    const harness = useStoreHarness(factory);

    test("parking stores the turn, records its waits pending and releases the lease", async () => {
      const { store } = harness();
      const r = await running(store);
      const receipt = await store.parkTurn(r.fence, draft(r));
      expect(receipt.resumable).toBe(false);
      expect(await store.currentLease(r.sid)).toBeUndefined();
      const parked = await store.readParkedTurn(r.sid);
      expect(parked).toMatchObject({
        sessionId: r.sid,
        turnId: TURN,
        waitingOn: [result("c1"), approval("c2")],
        progress: '{"step":1}',
        fencingToken: r.fence.fencingToken,
        cancelRequested: false,
        expiresAtMs: receipt.expiresAtMs,
      });
      expect(await store.readToolCalls(r.sid, TURN)).toEqual(
        expect.arrayContaining([
          { kind: "result", callId: "c1", status: "pending" },
          { kind: "approval", callId: "c2", status: "pending" },
        ]),
      );
    });

    test("while a turn is parked, idle claims find nothing: new input waits for it", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      await store.submitInput(inputDraft(r.sid, "later"));
      await store.enqueueWork(workDraft(r.sid, "later work"));
      const next = await resumer(store, r.sid);
      expect(await store.claimInputs(next, { kind: "idle" }, 10)).toBeUndefined();
      expect(await store.claimReadyWork(next, "idle", 10)).toBeUndefined();
    });

    test("a cancel asked while the resumed turn runs carries over to its next park", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r, { waitingOn: [result("c1")] }));
      await store.answerToolCalls(r.sid, TURN, [answer("c1")]);
      const next = await resumer(store, r.sid);
      const outcome = await store.resumeTurn(next, TURN);
      if (outcome?.status !== "answered") throw new Error(`resumed as ${outcome?.status}`);
      // The record stays until the commit: the cancel lands on it while the turn runs.
      expect(await store.cancelParkedTurn(r.sid, TURN)).toBe(true);
      const { inputClaim, workClaim } = outcome;
      if (!inputClaim || !workClaim) throw new Error("claims missing");
      const parkedAgain = await store.parkTurn(next, {
        ...draft(r, { waitingOn: [result("c3")] }),
        inputIds: inputClaim.inputs.map((i) => i.inputId),
        batchIds: workClaim.batches.map((b) => b.batchId),
      });
      expect(parkedAgain.resumable).toBe(true);
      const last = await resumer(store, r.sid, "last");
      expect((await store.resumeTurn(last, TURN))?.status).toBe("cancelled");
    });

    test("a resume while the turn waits changes nothing", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      await store.answerToolCalls(r.sid, TURN, [answer("c1")]);
      const next = await resumer(store, r.sid);
      const before = await store.listInputs(r.sid);
      const outcome = await store.resumeTurn(next, TURN);
      expect(outcome?.status).toBe("waiting");
      expect(await store.listInputs(r.sid)).toEqual(before);
      expect(await store.readParkedTurn(r.sid)).toMatchObject({ turnId: TURN });
    });

    test("once every wait is answered, a greater fence resumes it with its claims and commits once", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      await settleBoth(store, r.sid);
      const next = await resumer(store, r.sid);
      expect(next.fencingToken).toBeGreaterThan(r.fence.fencingToken);
      const outcome = await store.resumeTurn(next, TURN);
      if (outcome?.status !== "answered") throw new Error(`resumed as ${outcome?.status}`);
      expect(outcome.parked.progress).toBe('{"step":1}');
      expect(outcome.inputClaim?.fencingToken).toBe(next.fencingToken);
      expect(outcome.inputClaim?.inputs.map((i) => i.inputId)).toEqual(
        r.inputs.inputs.map((i) => i.inputId),
      );
      expect(outcome.workClaim?.batches.map((b) => b.batchId)).toEqual(
        r.work.batches.map((b) => b.batchId),
      );
      const { inputClaim, workClaim } = outcome;
      if (!inputClaim || !workClaim) throw new Error("claims missing");
      const head = (await store.loadSession(r.sid))?.headRevision ?? 0;
      const turnCommit = commitDraft(r.sid, head, {
        appendMessages: ['{"role":"assistant"}'],
        advanceTurn: true,
        parkedTurnId: TURN,
        completeInputClaims: [inputClaimCompletion(inputClaim)],
        completeQueueClaims: [queueClaimCompletion(workClaim)],
      });
      const receipt = await store.commit(turnCommit);
      expect(receipt.headRevision).toBe(head + 1);
      expect(await store.readParkedTurn(r.sid)).toBeUndefined();
      // At most once: a second commit naming the parked turn is refused.
      await expectTetherError(
        () => store.commit(commitDraft(r.sid, head + 1, { parkedTurnId: TURN })),
        "turn_not_running",
      );
      expect((await store.loadSession(r.sid))?.headRevision).toBe(head + 1);
    });

    test("the parking holder is stale: it can neither park again, resume, nor close calls", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      await settleBoth(store, r.sid);
      await expectTetherError(
        () => store.resumeTurn(r.fence, TURN),
        "session_execution_lease_expired",
      );
      await expectTetherError(
        () => store.parkTurn(r.fence, draft(r)),
        "session_execution_lease_expired",
      );
      await expectTetherError(
        () => store.closeToolCalls(r.fence, TURN),
        "session_execution_lease_expired",
      );
      const next = await resumer(store, r.sid);
      await expectTetherError(
        () => store.resumeTurn(r.fence, TURN),
        "session_execution_lease_expired",
      );
      expect((await store.resumeTurn(next, TURN))?.status).toBe("answered");
    });

    test("answers to a parked turn are first-writer-wins, exactly once", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      const reports = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.answerToolCalls(r.sid, TURN, [answer("c1", `answer-${i}`)]),
        ),
      );
      expect(reports.flatMap((x) => x.accepted)).toEqual(["c1"]);
      const winner = reports.findIndex((x) => x.accepted.length === 1);
      expect(await store.readToolCalls(r.sid, TURN)).toContainEqual({
        kind: "result",
        callId: "c1",
        status: "answered",
        answer: { callId: "c1", output: `answer-${winner}`, isError: false },
      });
    });

    test("a resume that dies is resumed again by the next holder", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      await settleBoth(store, r.sid);
      const first = await resumer(store, r.sid, "first");
      expect((await store.resumeTurn(first, TURN))?.status).toBe("answered");
      await store.releaseLease(first);
      const second = await resumer(store, r.sid, "second");
      const again = await store.resumeTurn(second, TURN);
      if (again?.status !== "answered") throw new Error(`resumed as ${again?.status}`);
      expect(again.inputClaim?.fencingToken).toBe(second.fencingToken);
      // The first resumer's claims are gone: its commit is refused.
      const head = (await store.loadSession(r.sid))?.headRevision ?? 0;
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(r.sid, head, {
              parkedTurnId: TURN,
              completeInputClaims: [
                { ...inputClaimCompletion(r.inputs), fencingToken: first.fencingToken },
              ],
            }),
          ),
        "turn_input_claim_superseded",
      );
    });

    test("a cancel ends the parked turn whatever it waits on; it names the turn or none", async () => {
      const { store } = harness();
      const r = await running(store);
      expect(await store.cancelParkedTurn(r.sid)).toBe(false);
      await store.parkTurn(r.fence, draft(r));
      expect(await store.cancelParkedTurn(r.sid, "another-turn")).toBe(false);
      expect(await store.cancelParkedTurn(r.sid, TURN)).toBe(true);
      expect((await store.readParkedTurn(r.sid))?.cancelRequested).toBe(true);
      const next = await resumer(store, r.sid);
      const outcome = await store.resumeTurn(next, TURN);
      expect(outcome?.status).toBe("cancelled");
    });

    test("a parked turn past its ttl resumes as expired", async () => {
      const h = harness();
      const r = await running(h.store);
      await h.store.parkTurn(r.fence, draft(r, { ttlMs: SHORT_TTL_MS }));
      await h.advanceTime(PAST_SHORT_TTL_MS);
      const next = await resumer(h.store, r.sid);
      expect((await h.store.resumeTurn(next, TURN))?.status).toBe("expired");
    });

    test("waits answered before parking make the receipt resumable", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.recordToolCalls(r.fence, TURN, [result("c1")]);
      await store.answerToolCalls(r.sid, TURN, [answer("c1")]);
      const receipt = await store.parkTurn(r.fence, draft(r, { waitingOn: [result("c1")] }));
      expect(receipt.resumable).toBe(true);
    });

    test("parking checks every claim first: a claim the fence does not hold changes nothing", async () => {
      const { store } = harness();
      const r = await running(store);
      const other = freshSessionId();
      await store.submitInput(inputDraft(r.sid, "unclaimed"));
      const unclaimed = (await store.listInputs(r.sid)).find((i) => i.state === "pending");
      if (!unclaimed) throw new Error("no pending input");
      await expectTetherError(
        () =>
          store.parkTurn(
            r.fence,
            draft(r, { inputIds: [unclaimed.inputId], waitingOn: [result("c9")] }),
          ),
        "turn_input_claim_superseded",
      );
      expect(await store.currentLease(r.sid)).toMatchObject({
        fencingToken: r.fence.fencingToken,
      });
      expect(await store.readParkedTurn(r.sid)).toBeUndefined();
      expect(await store.readToolCalls(r.sid, TURN)).toEqual([]);
      expect(await store.readParkedTurn(other)).toBeUndefined();
    });

    test("a live fence cannot park claims an earlier generation holds: each list is refused, nothing changes", async () => {
      const { store } = harness();
      // The earlier holder's claims stay on the items after its release; the next holder lists
      // them as if they were its own.
      const earlier = await running(store);
      await store.releaseLease(earlier.fence);
      const next = await resumer(store, earlier.sid);
      expect(next.fencingToken).toBeGreaterThan(earlier.fence.fencingToken);
      const unchanged = async () => {
        expect(await store.currentLease(earlier.sid)).toMatchObject({
          fencingToken: next.fencingToken,
        });
        expect(await store.readParkedTurn(earlier.sid)).toBeUndefined();
        expect(await store.readToolCalls(earlier.sid, TURN)).toEqual([]);
        expect((await store.listInputs(earlier.sid)).map((i) => i.claimFencingToken)).toEqual([
          earlier.fence.fencingToken,
        ]);
        expect((await store.listWork(earlier.sid)).map((b) => b.claimFencingToken)).toEqual([
          earlier.fence.fencingToken,
        ]);
      };
      await expectTetherError(
        () => store.parkTurn(next, draft(earlier, { batchIds: [] })),
        "turn_input_claim_superseded",
      );
      await unchanged();
      await expectTetherError(
        () => store.parkTurn(next, draft(earlier, { inputIds: [] })),
        "queued_work_claim_superseded",
      );
      await unchanged();
    });

    test("another turn cannot park over a parked one", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      const next = await resumer(store, r.sid);
      await expectTetherError(
        () =>
          store.parkTurn(
            next,
            draft(r, {
              turnId: "turn-other",
              inputIds: [],
              batchIds: [],
              waitingOn: [result("x")],
            }),
          ),
        "turn_not_running",
      );
      expect((await store.readParkedTurn(r.sid))?.turnId).toBe(TURN);
    });

    test("a resumed turn that waits again parks again under its new fence", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      await settleBoth(store, r.sid);
      const next = await resumer(store, r.sid);
      await store.resumeTurn(next, TURN);
      const receipt = await store.parkTurn(
        next,
        draft(r, { waitingOn: [result("c3")], progress: '{"step":2}' }),
      );
      expect(receipt.resumable).toBe(false);
      expect(await store.readParkedTurn(r.sid)).toMatchObject({
        waitingOn: [result("c3")],
        progress: '{"step":2}',
        fencingToken: next.fencingToken,
      });
    });

    test("steers for the parked turn stay for it; a delete removes the parked turn", async () => {
      const { store } = harness();
      const r = await running(store);
      await store.parkTurn(r.fence, draft(r));
      await store.submitInput(inputDraft(r.sid, "steer", activeTurn(TURN, "after_work")));
      const next = await resumer(store, r.sid);
      const steer = await store.claimInputs(
        next,
        { kind: "checkpoint", turnId: TURN, checkpoint: "after_work" },
        1,
      );
      expect(steer?.inputs.map((i) => i.payload)).toEqual(["steer"]);
      expect(await store.deleteSession(r.sid)).toBe(true);
      expect(await store.readParkedTurn(r.sid)).toBeUndefined();
    });
  });
}
