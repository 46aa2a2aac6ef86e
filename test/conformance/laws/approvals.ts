// Approvals as typed waits: a call that needs approval waits for a decision, a wait of its own
// beside the call's result. Decisions are first-writer-wins per call id and read back typed; a
// decision and a result never settle each other; a park keeps its waits' kinds. Every law runs
// on memory, Redis, Redis Cluster and the wire.
import { describe, expect, test } from "vitest";
import { fenceOf, type LeaseFence } from "../../../src/domain/lease.js";
import type { ApprovalDecision, ToolWait } from "../../../src/domain/tool-calls.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import { freshSessionId, LONG_TTL_MS, opaqueOwner } from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const TURN = "turn-approvals";
const result = (callId: string): ToolWait => ({ kind: "result", callId });
const approval = (callId: string): ToolWait => ({ kind: "approval", callId });
const decision = (callId: string, approve: boolean, reason: string): ApprovalDecision => ({
  callId,
  approve,
  reason,
});

async function heldWith(store: RuntimeStore, ...waits: ToolWait[]): Promise<LeaseFence> {
  const fence = fenceOf(await acquire(store, freshSessionId(), opaqueOwner("a"), LONG_TTL_MS));
  if (waits.length > 0) await store.recordToolCalls(fence, TURN, waits);
  return fence;
}

export function describeApprovalLaws(factory: StoreFactory): void {
  describe("approvals", () => {
    const harness = useStoreHarness(factory);

    test("the first decision for a call wins and reads back as a decision", async () => {
      const { store } = harness();
      const fence = await heldWith(store, approval("c1"), approval("c2"));
      const sid = fence.sessionId;
      expect(
        await store.decideApprovals(sid, TURN, [
          decision("c1", false, "too risky"),
          decision("c1", true, "second thoughts"),
        ]),
      ).toEqual({ accepted: ["c1"], ignored: ["c1"] });
      expect(await store.decideApprovals(sid, TURN, [decision("c1", true, "later")])).toEqual({
        accepted: [],
        ignored: ["c1"],
      });
      expect(await store.decideApprovals(sid, TURN, [decision("c2", true, "")])).toEqual({
        accepted: ["c2"],
        ignored: [],
      });
      expect(await store.readToolCalls(sid, TURN)).toEqual(
        expect.arrayContaining([
          {
            kind: "approval",
            callId: "c1",
            status: "decided",
            decision: { callId: "c1", approve: false, reason: "too risky" },
          },
          {
            kind: "approval",
            callId: "c2",
            status: "decided",
            decision: { callId: "c2", approve: true, reason: "" },
          },
        ]),
      );
    });

    test("concurrent decisions for one call: exactly one is accepted, and it is the one stored", async () => {
      const { store } = harness();
      const fence = await heldWith(store, approval("c1"));
      const reports = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.decideApprovals(fence.sessionId, TURN, [decision("c1", i % 2 === 0, `d-${i}`)]),
        ),
      );
      const winners = reports.flatMap((r, i) => (r.accepted.length > 0 ? [i] : []));
      expect(winners).toHaveLength(1);
      const winner = winners[0] as number;
      expect(reports.flatMap((r) => r.ignored)).toHaveLength(7);
      expect(await store.readToolCalls(fence.sessionId, TURN)).toEqual([
        {
          kind: "approval",
          callId: "c1",
          status: "decided",
          decision: { callId: "c1", approve: winner % 2 === 0, reason: `d-${winner}` },
        },
      ]);
    });

    test("a call's decision and its result are distinct waits: neither settles the other", async () => {
      const { store } = harness();
      const fence = await heldWith(store, approval("c1"), result("c1"));
      const sid = fence.sessionId;
      expect(await store.decideApprovals(sid, TURN, [decision("c1", true, "go")])).toEqual({
        accepted: ["c1"],
        ignored: [],
      });
      expect(await store.readToolCalls(sid, TURN)).toEqual(
        expect.arrayContaining([
          { kind: "result", callId: "c1", status: "pending" },
          expect.objectContaining({ kind: "approval", callId: "c1", status: "decided" }),
        ]),
      );
      const answer = { callId: "c1", output: "42", isError: false };
      expect(await store.answerToolCalls(sid, TURN, [answer])).toEqual({
        accepted: ["c1"],
        ignored: [],
      });
      expect(await store.readToolCalls(sid, TURN)).toEqual(
        expect.arrayContaining([
          { kind: "result", callId: "c1", status: "answered", answer },
          {
            kind: "approval",
            callId: "c1",
            status: "decided",
            decision: { callId: "c1", approve: true, reason: "go" },
          },
        ]),
      );
    });

    test("a decision for a call that waits only for its result is ignored, and the reverse", async () => {
      const { store } = harness();
      const fence = await heldWith(store, result("r1"), approval("a1"));
      const sid = fence.sessionId;
      expect(await store.decideApprovals(sid, TURN, [decision("r1", true, "")])).toEqual({
        accepted: [],
        ignored: ["r1"],
      });
      expect(
        await store.answerToolCalls(sid, TURN, [{ callId: "a1", output: "x", isError: false }]),
      ).toEqual({ accepted: [], ignored: ["a1"] });
      expect(await store.readToolCalls(sid, TURN)).toEqual(
        expect.arrayContaining([
          { kind: "result", callId: "r1", status: "pending" },
          { kind: "approval", callId: "a1", status: "pending" },
        ]),
      );
    });

    test("a result whose call id reads like an approval stays that call's result", async () => {
      const { store } = harness();
      const fence = await heldWith(store, result("approve:c1"), approval("c1"));
      const sid = fence.sessionId;
      const answer = { callId: "approve:c1", output: "out", isError: false };
      expect(await store.answerToolCalls(sid, TURN, [answer])).toEqual({
        accepted: ["approve:c1"],
        ignored: [],
      });
      expect(await store.readToolCalls(sid, TURN)).toEqual(
        expect.arrayContaining([
          { kind: "result", callId: "approve:c1", status: "answered", answer },
          { kind: "approval", callId: "c1", status: "pending" },
        ]),
      );
    });

    test("closing an approval leaves the call's result open; a later decision is ignored", async () => {
      const { store } = harness();
      const fence = await heldWith(store, approval("c1"), result("c1"));
      expect(await store.closeToolCalls(fence, TURN, [approval("c1")])).toEqual([
        { kind: "approval", callId: "c1", status: "closed" },
      ]);
      expect(
        await store.decideApprovals(fence.sessionId, TURN, [decision("c1", true, "late")]),
      ).toEqual({ accepted: [], ignored: ["c1"] });
      expect(await store.readToolCalls(fence.sessionId, TURN)).toEqual(
        expect.arrayContaining([
          { kind: "approval", callId: "c1", status: "closed" },
          { kind: "result", callId: "c1", status: "pending" },
        ]),
      );
    });

    test("a park's waits read back with their kinds, and its decision settles it", async () => {
      const { store } = harness();
      const fence = await heldWith(store);
      const sid = fence.sessionId;
      const waitingOn = [result("c1"), approval("c1"), approval("c2")];
      const receipt = await store.parkTurn(fence, {
        turnId: TURN,
        waitingOn,
        progress: "{}",
        inputIds: [],
        batchIds: [],
        ttlMs: LONG_TTL_MS,
      });
      expect(receipt.resumable).toBe(false);
      expect((await store.readParkedTurn(sid))?.waitingOn).toEqual(waitingOn);
      await store.answerToolCalls(sid, TURN, [{ callId: "c1", output: "o", isError: false }]);
      await store.decideApprovals(sid, TURN, [decision("c1", true, "")]);
      const next = fenceOf(await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS));
      const waiting = await store.resumeTurn(next, TURN);
      expect(waiting?.status).toBe("waiting");
      expect(waiting?.parked.waitingOn).toEqual(waitingOn);
      await store.decideApprovals(sid, TURN, [decision("c2", false, "no")]);
      expect((await store.resumeTurn(next, TURN))?.status).toBe("answered");
    });

    test("a turn with no records is turn_not_running; bad decisions are invalid_argument", async () => {
      const { store } = harness();
      const fence = await heldWith(store, approval("c1"));
      await expectTetherError(
        () => store.decideApprovals(fence.sessionId, "other-turn", [decision("c1", true, "")]),
        "turn_not_running",
      );
      await expectTetherError(
        () => store.decideApprovals(fence.sessionId, TURN, []),
        "invalid_argument",
      );
      await expectTetherError(
        () => store.decideApprovals(fence.sessionId, TURN, [decision("", true, "")]),
        "invalid_argument",
      );
    });
  });
}
