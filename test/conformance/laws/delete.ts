// What a delete removes (the store port's deleteSession, ADR 0001 and 0010, DESIGN.md section 6):
// the transcript and its history, the stamps, the lease, the queue, the inputs with their source
// keys, and the parked turn, so the id starts afresh. Two things outlive it on purpose: the lease
// generation counter (fencing tokens never repeat) and the turns' tool-call records, which expire
// on their own (ADR 0001). A session's events belong to the event log, which its own remove drops.
import { describe, expect, test } from "vitest";
import { fenceOf } from "../../../src/domain/lease.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  activeTurn,
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const TURN = "turn-deleted";
/** Far more than a test runs for: a clock this far behind never catches up with the tokens. */
const CLOCK_LAG_MS = 3_600_000;
const STAMP = { operationId: "op-delete", contentHash: "hash-delete" };

export function describeDeleteLaws(factory: StoreFactory): void {
  describe("what a delete removes", () => {
    const harness = useStoreHarness(factory);

    test("transcript, history, stamps, lease, queue, inputs and parked turn go; the generation and tool calls stay", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["m1"], stamp: STAMP }));
      await store.commit(commitDraft(sid, 1, { appendMessages: ["m2"] }));
      await store.enqueueWork(workDraft(sid, "claimed", { sourceKey: "work-key" }));
      await store.enqueueWork(workDraft(sid, "open"));
      await store.submitInput(inputDraft(sid, "claimed", undefined, "input-key"));
      await store.submitInput(inputDraft(sid, "open"));
      await store.submitInput(inputDraft(sid, "steer", activeTurn(TURN, "after_work")));
      const parker = fenceOf(await acquire(store, sid, opaqueOwner("parker"), LONG_TTL_MS));
      const work = await store.claimReadyWork(parker, "idle", 1);
      const inputs = await store.claimInputs(parker, { kind: "idle" }, 1);
      if (!work || !inputs) throw new Error("seeding claimed nothing");
      await store.parkTurn(parker, {
        turnId: TURN,
        waitingOn: [{ kind: "result", callId: "c1" }],
        progress: "{}",
        inputIds: inputs.inputs.map((i) => i.inputId),
        batchIds: work.batches.map((b) => b.batchId),
        ttlMs: LONG_TTL_MS,
      });
      const holder = fenceOf(await acquire(store, sid, opaqueOwner("holder"), LONG_TTL_MS));

      expect(await store.deleteSession(sid)).toBe(true);

      expect(await store.loadSession(sid)).toBeUndefined();
      await expectTetherError(() => store.readRevision(sid, 1), "session_not_found");
      expect((await store.listSessions({ prefix: sid, limit: 10 })).sessionIds).toEqual([]);
      expect(await store.currentLease(sid)).toBeUndefined();
      await expectTetherError(
        () => store.renewLease(holder, LONG_TTL_MS),
        "session_execution_lease_expired",
      );
      expect(await store.listWork(sid)).toEqual([]);
      expect(await store.listInputs(sid)).toEqual([]);
      expect(await store.readParkedTurn(sid)).toBeUndefined();
      expect(await store.deleteSession(sid)).toBe(false);
      // Kept: the turn's tool-call records, and a generation counter that only counts up.
      expect(await store.readToolCalls(sid, TURN)).toEqual([
        { kind: "result", callId: "c1", status: "pending" },
      ]);
      const after = await acquire(store, sid, opaqueOwner("after"), LONG_TTL_MS);
      expect(after.fencingToken).toBeGreaterThan(holder.fencingToken);
    });

    test("tokens keep rising across a delete and recreate even with the clock behind the last token", async () => {
      const { store, clockBehindTokens } = harness();
      const sid = freshSessionId();
      const tokens: number[] = [];
      const holdAndRelease = async (name: string) => {
        const lease = await acquire(store, sid, opaqueOwner(name), LONG_TTL_MS);
        tokens.push(lease.fencingToken);
        await store.releaseLease(fenceOf(lease));
      };
      await store.commit(commitDraft(sid, 0, { appendMessages: ["m1"] }));
      await holdAndRelease("before");
      // A failover to a server whose clock lags: the floor by the clock no longer lifts tokens,
      // only the counter the delete must leave in place does.
      await clockBehindTokens(sid, CLOCK_LAG_MS);
      await holdAndRelease("ahead");
      expect(await store.deleteSession(sid)).toBe(true);
      await store.commit(commitDraft(sid, 0, { appendMessages: ["again"] }));
      const recreated = await acquire(store, sid, opaqueOwner("recreated"), LONG_TTL_MS);
      expect(recreated.fencingToken).toBeGreaterThan(Math.max(...tokens));
    });

    test("the id starts afresh: source keys and stamps are forgotten, the transcript is new", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["old"], stamp: STAMP }));
      await store.enqueueWork(workDraft(sid, "old work", { sourceKey: "work-key" }));
      await store.submitInput(inputDraft(sid, "old input", undefined, "input-key"));
      expect(await store.deleteSession(sid)).toBe(true);

      const work = await store.enqueueWork(workDraft(sid, "new work", { sourceKey: "work-key" }));
      const input = await store.submitInput(inputDraft(sid, "new input", undefined, "input-key"));
      expect(work.deduplicated).toBe(false);
      expect(input.deduplicated).toBe(false);
      expect((await store.listWork(sid)).map((b) => b.payload)).toEqual(["new work"]);
      expect((await store.listInputs(sid)).map((i) => i.payload)).toEqual(["new input"]);
      // The first input created the session again at head 1; the old stamp answers nothing.
      const receipt = await store.commit(
        commitDraft(sid, 1, { appendMessages: ["new"], stamp: STAMP }),
      );
      expect(receipt).toMatchObject({ headRevision: 2, replayed: false });
      expect((await store.loadSession(sid))?.messages).toEqual(["new"]);
    });
  });
}
