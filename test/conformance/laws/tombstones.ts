// Law 20: cancelled and completed items stay as tombstones that answer idempotent replays until
// vacuum removes them; vacuum reports what it removed.
import { describe, expect, test } from "vitest";
import { inputClaimCompletion } from "../../../src/domain/inputs.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { queueClaimCompletion } from "../../../src/domain/queue.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  NEXT_TURN,
  opaqueOwner,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeTombstoneLaws(factory: StoreFactory): void {
  describe("tombstones and vacuum", () => {
    const harness = useStoreHarness(factory);

    test("law 20: a cancelled batch keeps answering source-key replays until vacuum", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const { batch } = await store.enqueueWork(workDraft(sid, "wake", { sourceKey: "sk-1" }));
      await store.cancelWork(sid, [batch.batchId]);
      const replay = await store.enqueueWork(workDraft(sid, "wake", { sourceKey: "sk-1" }));
      expect(replay.deduplicated).toBe(true);
      expect(replay.batch.batchId).toBe(batch.batchId);
      expect(replay.batch.state).toBe("cancelled");
      await expectTetherError(
        () => store.enqueueWork(workDraft(sid, "other", { sourceKey: "sk-1" })),
        "source_key_conflict",
      );
      expect(await store.listWork(sid)).toEqual([]);
    });

    test("law 20: a completed input keeps answering source-key replays until vacuum", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const { input } = await store.submitInput(inputDraft(sid, "hi", NEXT_TURN, "msg-1"));
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const claim = await store.claimInputs(fenceOf(held), { kind: "idle" }, 10);
      await store.commit(
        commitDraft(sid, 1, { completeInputClaims: [inputClaimCompletion(claim!)] }),
      );
      const replay = await store.submitInput(inputDraft(sid, "hi", NEXT_TURN, "msg-1"));
      expect(replay.deduplicated).toBe(true);
      expect(replay.input.inputId).toBe(input.inputId);
      expect(replay.input.state).toBe("completed");
      expect(await store.listInputs(sid)).toEqual([]);
    });

    test("law 20: vacuum removes completed and cancelled items, reports the counts and keeps live ones", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      // Work: one completed, two cancelled, one claimed, one ready.
      const done = (await store.enqueueWork(workDraft(sid, "done"))).batch;
      const workClaim = await store.claimWorkByIds(fenceOf(held), [done.batchId]);
      const c1 = (await store.enqueueWork(workDraft(sid, "c1"))).batch;
      const c2 = (await store.enqueueWork(workDraft(sid, "c2"))).batch;
      await store.cancelWork(sid, [c1.batchId, c2.batchId]);
      const claimed = (await store.enqueueWork(workDraft(sid, "claimed"))).batch;
      await store.claimWorkByIds(fenceOf(held), [claimed.batchId]);
      await store.enqueueWork(workDraft(sid, "ready"));
      // Inputs: one completed, one cancelled, one pending.
      await store.submitInput(inputDraft(sid, "done"));
      const inputClaim = await store.claimInputs(fenceOf(held), { kind: "idle" }, 1);
      const cancelled = (await store.submitInput(inputDraft(sid, "cancelled"))).input;
      await store.cancelInputs(sid, { kind: "ids", inputIds: [cancelled.inputId] });
      await store.submitInput(inputDraft(sid, "pending"));
      await store.commit(
        commitDraft(sid, 1, {
          completeQueueClaims: [queueClaimCompletion(workClaim.claim!)],
          completeInputClaims: [inputClaimCompletion(inputClaim!)],
        }),
      );

      expect(await store.vacuum(sid)).toEqual({ removedBatches: 3, removedInputs: 2 });
      expect((await store.listWork(sid)).map((b) => [b.payload, b.state])).toEqual([
        ["claimed", "claimed"],
        ["ready", "ready"],
      ]);
      expect((await store.listInputs(sid)).map((i) => [i.payload, i.state])).toEqual([
        ["pending", "pending"],
      ]);
      expect(await store.cancelWork(sid, [c1.batchId])).toEqual({
        outcomes: [{ id: c1.batchId, status: "not_found" }],
      });
    });

    test("law 20: a second vacuum removes nothing", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const { batch } = await store.enqueueWork(workDraft(sid, "w"));
      const { input } = await store.submitInput(inputDraft(sid, "i"));
      await store.cancelWork(sid, [batch.batchId]);
      await store.cancelInputs(sid, { kind: "ids", inputIds: [input.inputId] });
      expect(await store.vacuum(sid)).toEqual({ removedBatches: 1, removedInputs: 1 });
      expect(await store.vacuum(sid)).toEqual({ removedBatches: 0, removedInputs: 0 });
    });

    test("law 20: vacuum of a session with no tombstones removes nothing", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "w"));
      await store.submitInput(inputDraft(sid, "i"));
      expect(await store.vacuum(sid)).toEqual({ removedBatches: 0, removedInputs: 0 });
      expect(await store.listWork(sid)).toHaveLength(1);
      expect(await store.listInputs(sid)).toHaveLength(1);
    });

    test("law 20: after vacuum a source key is forgotten and may be used again", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const old = (await store.enqueueWork(workDraft(sid, "wake", { sourceKey: "sk-1" }))).batch;
      await store.cancelWork(sid, [old.batchId]);
      const oldInput = (await store.submitInput(inputDraft(sid, "hi", NEXT_TURN, "msg-1"))).input;
      await store.cancelInputs(sid, { kind: "ids", inputIds: [oldInput.inputId] });
      await store.vacuum(sid);

      const fresh = await store.enqueueWork(workDraft(sid, "new content", { sourceKey: "sk-1" }));
      expect(fresh.deduplicated).toBe(false);
      expect(fresh.batch.batchId).not.toBe(old.batchId);
      expect(fresh.batch.state).toBe("ready");
      const freshInput = await store.submitInput(
        inputDraft(sid, "hello again", NEXT_TURN, "msg-1"),
      );
      expect(freshInput.deduplicated).toBe(false);
      expect(freshInput.input.inputId).not.toBe(oldInput.inputId);
    });

    test("law 20: vacuum removes what it reports from every index: a later suffix cancel sees no ghosts", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const submit = async (text: string) =>
        (await store.submitInput(inputDraft(sid, text))).input.inputId;
      const one = await submit("one");
      const two = await submit("two");
      const three = await submit("three");
      const four = await submit("four");
      await store.cancelInputs(sid, { kind: "ids", inputIds: [two] });
      expect(await store.vacuum(sid)).toEqual({ removedBatches: 0, removedInputs: 1 });
      // From the first input on: the vacuumed one is gone from the order, not reported not_found.
      const report = await store.cancelInputs(sid, { kind: "suffix", fromInputId: one });
      expect(report.outcomes).toEqual([
        { id: one, status: "cancelled" },
        { id: three, status: "cancelled" },
        { id: four, status: "cancelled" },
      ]);
      // The vacuumed input as an anchor: not found, and nothing after it is touched twice.
      const ghost = await store.cancelInputs(sid, { kind: "suffix", fromInputId: two });
      expect(ghost.outcomes).toEqual([{ id: two, status: "not_found" }]);
    });
  });
}
