// Laws 4, 12 and 14 (and the input side of law 18): claims need the live fence, stay in the store
// until a commit settles them, pass to a successor generation, and a superseded claim's
// completion changes nothing.
import { describe, expect, test } from "vitest";
import { inputClaimCompletion } from "../../../src/domain/inputs.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { queueClaimCompletion } from "../../../src/domain/queue.js";
import { acquire, expectAcquired, expectTetherError } from "../support/expectations.js";
import {
  commitDraft,
  deadLocalOwner,
  freshSessionId,
  inputDraft,
  localClaimant,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeClaimLaws(factory: StoreFactory): void {
  describe("claims", () => {
    const harness = useStoreHarness(factory);

    test("law 12: claiming work with a released fence is session_execution_lease_expired", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "w1"));
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      await store.releaseLease(fenceOf(held));
      await expectTetherError(
        () => store.claimReadyWork(fenceOf(held), "idle", 10),
        "session_execution_lease_expired",
      );
      expect((await store.listWork(sid)).map((b) => b.state)).toEqual(["ready"]);
    });

    test("law 12: claiming work with an expired fence is session_execution_lease_expired", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "w1"));
      const held = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      await expectTetherError(
        () => store.claimReadyWork(fenceOf(held), "idle", 10),
        "session_execution_lease_expired",
      );
      expect((await store.listWork(sid)).map((b) => b.state)).toEqual(["ready"]);
    });

    test("law 12: claiming work with a forged lease token or generation is session_execution_lease_expired", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const { batch } = await store.enqueueWork(workDraft(sid, "w1"));
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      await expectTetherError(
        () => store.claimReadyWork({ ...fenceOf(held), leaseToken: "forged" }, "idle", 10),
        "session_execution_lease_expired",
      );
      await expectTetherError(
        () =>
          store.claimReadyWork(
            { ...fenceOf(held), fencingToken: held.fencingToken + 1 },
            "idle",
            10,
          ),
        "session_execution_lease_expired",
      );
      await expectTetherError(
        () => store.claimWorkByIds({ ...fenceOf(held), leaseToken: "forged" }, [batch.batchId]),
        "session_execution_lease_expired",
      );
      expect((await store.listWork(sid)).map((b) => b.state)).toEqual(["ready"]);
    });

    test("law 14: a claimed but unsettled batch stays listed, claimed by its generation", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const { batch } = await store.enqueueWork(workDraft(sid, "w1"));
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const claim = await store.claimReadyWork(fenceOf(held), "idle", 10);
      expect(claim?.fencingToken).toBe(held.fencingToken);
      expect(claim?.batches.map((b) => b.batchId)).toEqual([batch.batchId]);
      const listed = await store.listWork(sid);
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        batchId: batch.batchId,
        state: "claimed",
        claimFencingToken: held.fencingToken,
        claimId: claim?.claimId,
      });
      // The same generation does not take its own claim twice.
      expect(await store.claimReadyWork(fenceOf(held), "idle", 10)).toBeUndefined();
    });

    test("law 14: a successor generation re-claims the batch and the stale completion is queued_work_claim_superseded", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["base"] }));
      const { batch } = await store.enqueueWork(workDraft(sid, "w1"));
      const stale = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      const staleClaim = await store.claimReadyWork(fenceOf(stale), "idle", 10);
      expect(staleClaim).toBeDefined();
      await advanceTime(PAST_SHORT_TTL_MS);
      const successor = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      const liveClaim = await store.claimReadyWork(fenceOf(successor), "idle", 10);
      expect(liveClaim?.batches.map((b) => b.batchId)).toEqual([batch.batchId]);
      expect(liveClaim?.fencingToken).toBe(successor.fencingToken);
      expect(liveClaim?.claimId).not.toBe(staleClaim?.claimId);

      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 1, {
              appendMessages: ["stale turn"],
              completeQueueClaims: [queueClaimCompletion(staleClaim!)],
            }),
          ),
        "queued_work_claim_superseded",
      );
      expect((await store.loadSession(sid))?.headRevision).toBe(1);
      expect(await store.listWork(sid)).toEqual([
        expect.objectContaining({
          batchId: batch.batchId,
          state: "claimed",
          claimFencingToken: successor.fencingToken,
          claimId: liveClaim?.claimId,
        }),
      ]);

      await store.commit(
        commitDraft(sid, 1, {
          appendMessages: ["live turn"],
          completeQueueClaims: [queueClaimCompletion(liveClaim!)],
        }),
      );
      expect(await store.listWork(sid)).toEqual([]);
      expect((await store.loadSession(sid))?.messages).toEqual(["base", "live turn"]);
    });

    test("law 4: a reclaim takeover supersedes the dead holder's claim", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const { batch } = await store.enqueueWork(workDraft(sid, "w1"));
      const dead = await acquire(store, sid, deadLocalOwner("dead"), LONG_TTL_MS);
      const staleClaim = await store.claimReadyWork(fenceOf(dead), "idle", 1);
      expect(staleClaim?.batches[0]?.batchId).toBe(batch.batchId);
      const live = expectAcquired(
        await store.reclaimLease(sid, localClaimant("live"), fenceOf(dead), LONG_TTL_MS),
      );
      const liveClaim = await store.claimReadyWork(fenceOf(live), "idle", 1);
      expect(liveClaim?.batches[0]?.batchId).toBe(batch.batchId);
      expect(liveClaim!.fencingToken).toBeGreaterThan(staleClaim!.fencingToken);
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 1, {
              releaseLease: fenceOf(live),
              completeQueueClaims: [queueClaimCompletion(staleClaim!)],
            }),
          ),
        "queued_work_claim_superseded",
      );
      expect((await store.loadSession(sid))?.headRevision).toBe(1);
      expect(await store.currentLease(sid)).toBeDefined();
    });

    test("law 4: a completion whose generation lost the lease is superseded even if nobody re-claimed", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "w1"));
      const stale = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      const staleClaim = await store.claimReadyWork(fenceOf(stale), "idle", 10);
      await advanceTime(PAST_SHORT_TTL_MS);
      await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 1, {
              appendMessages: ["stale"],
              completeQueueClaims: [queueClaimCompletion(staleClaim!)],
            }),
          ),
        "queued_work_claim_superseded",
      );
      expect((await store.loadSession(sid))?.headRevision).toBe(1);
      expect((await store.listWork(sid)).map((b) => b.state)).toEqual(["claimed"]);
    });

    test("law 4: a commit completing live claims settles its batches and inputs at once", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const { batch } = await store.enqueueWork(workDraft(sid, "w1"));
      const { input } = await store.submitInput(inputDraft(sid, "hi"));
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const work = await store.claimReadyWork(fenceOf(held), "idle", 10);
      const inputs = await store.claimInputs(fenceOf(held), { kind: "idle" }, 10);
      const receipt = await store.commit(
        commitDraft(sid, 1, {
          appendMessages: ["turn"],
          advanceTurn: true,
          releaseLease: fenceOf(held),
          completeQueueClaims: [queueClaimCompletion(work!)],
          completeInputClaims: [inputClaimCompletion(inputs!)],
        }),
      );
      expect(receipt.headRevision).toBe(2);
      expect(await store.listWork(sid)).toEqual([]);
      expect(await store.listInputs(sid)).toEqual([]);
      expect(await store.currentLease(sid)).toBeUndefined();
      expect(await store.cancelWork(sid, [batch.batchId])).toEqual({
        outcomes: [{ id: batch.batchId, status: "already_completed" }],
      });
      expect(await store.cancelInputs(sid, { kind: "ids", inputIds: [input.inputId] })).toEqual({
        outcomes: [{ id: input.inputId, status: "already_completed" }],
      });
    });

    test("law 18: a successor re-claims inputs and the stale completion is turn_input_claim_superseded", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["base"] }));
      const { input } = await store.submitInput(inputDraft(sid, "hello"));
      const stale = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      const staleClaim = await store.claimInputs(fenceOf(stale), { kind: "idle" }, 10);
      expect(staleClaim?.inputs.map((i) => i.inputId)).toEqual([input.inputId]);
      await advanceTime(PAST_SHORT_TTL_MS);
      const successor = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      const liveClaim = await store.claimInputs(fenceOf(successor), { kind: "idle" }, 10);
      expect(liveClaim?.inputs.map((i) => i.inputId)).toEqual([input.inputId]);
      expect(liveClaim?.fencingToken).toBe(successor.fencingToken);

      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 1, {
              appendMessages: ["stale turn"],
              completeInputClaims: [inputClaimCompletion(staleClaim!)],
            }),
          ),
        "turn_input_claim_superseded",
      );
      expect((await store.loadSession(sid))?.headRevision).toBe(1);
      expect(await store.listInputs(sid)).toEqual([
        expect.objectContaining({
          inputId: input.inputId,
          state: "claimed",
          claimFencingToken: successor.fencingToken,
          claimId: liveClaim?.claimId,
        }),
      ]);

      await store.commit(
        commitDraft(sid, 1, { completeInputClaims: [inputClaimCompletion(liveClaim!)] }),
      );
      expect(await store.listInputs(sid)).toEqual([]);
    });

    test("law 14: concurrent claims by one live fence hand each batch to exactly one claim", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const enqueued: string[] = [];
      for (let i = 0; i < 6; i++) {
        enqueued.push((await store.enqueueWork(workDraft(sid, `w${i}`))).batch.batchId);
      }
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const claims = await Promise.all(
        Array.from({ length: 8 }, () => store.claimReadyWork(fenceOf(held), "idle", 1)),
      );
      const claimed = claims.flatMap((c) => c?.batches.map((b) => b.batchId) ?? []);
      expect(claimed).toHaveLength(6);
      expect([...claimed].sort()).toEqual([...enqueued].sort());
      expect(claims.filter((c) => c === undefined)).toHaveLength(2);
      expect(new Set(claims.flatMap((c) => (c ? [c.claimId] : []))).size).toBe(6);
    });

    test("law 18: concurrent input claims by one live fence hand each input to exactly one claim", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const submitted: string[] = [];
      for (let i = 0; i < 5; i++) {
        submitted.push((await store.submitInput(inputDraft(sid, `i${i}`))).input.inputId);
      }
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const claims = await Promise.all(
        Array.from({ length: 5 }, () => store.claimInputs(fenceOf(held), { kind: "idle" }, 2)),
      );
      const claimed = claims.flatMap((c) => c?.inputs.map((i) => i.inputId) ?? []);
      expect(claimed).toHaveLength(5);
      expect([...claimed].sort()).toEqual([...submitted].sort());
    });
  });
}
