// Laws 11, 13 and 15: enqueue order and source-key idempotency, how a claim is composed (class,
// boundary, join/exclusive, max), claims by id and cancellation of unclaimed batches.
import { describe, expect, test } from "vitest";
import { parseBatchId } from "../../../src/domain/ids.js";
import { fenceOf, type SessionExecutionLease } from "../../../src/domain/lease.js";
import type { QueuedWorkClaim } from "../../../src/domain/queue.js";
import { queueClaimCompletion } from "../../../src/domain/queue.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import type { SessionId } from "../../../src/domain/ids.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  joinDraft,
  LONG_TTL_MS,
  opaqueOwner,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

function payloads(claim: QueuedWorkClaim | undefined): string[] {
  return claim?.batches.map((b) => b.payload) ?? [];
}

async function leaseFor(store: RuntimeStore, sid: SessionId): Promise<SessionExecutionLease> {
  return acquire(store, sid, opaqueOwner("worker"), LONG_TTL_MS);
}

export function describeQueueLaws(factory: StoreFactory): void {
  describe("queued work", () => {
    const harness = useStoreHarness(factory);

    test("law 11: enqueue assigns increasing enqueue_seq and listing follows it", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const seqs: number[] = [];
      for (const p of ["first", "second", "third"]) {
        seqs.push((await store.enqueueWork(workDraft(sid, p))).batch.enqueueSeq);
      }
      expect(seqs).toEqual([1, 2, 3]);
      const listed = await store.listWork(sid);
      expect(listed.map((b) => b.payload)).toEqual(["first", "second", "third"]);
      expect(listed.map((b) => b.enqueueSeq)).toEqual([1, 2, 3]);
      expect(listed.every((b) => b.state === "ready" && b.sessionId === sid)).toBe(true);
      expect(new Set(listed.map((b) => b.batchId)).size).toBe(3);
    });

    test("law 11: the same source key with the same content returns the existing batch", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = await store.enqueueWork(workDraft(sid, "wake", { sourceKey: "sk-1" }));
      expect(first.deduplicated).toBe(false);
      const again = await store.enqueueWork(workDraft(sid, "wake", { sourceKey: "sk-1" }));
      expect(again.deduplicated).toBe(true);
      expect(again.batch.batchId).toBe(first.batch.batchId);
      expect(again.batch.enqueueSeq).toBe(first.batch.enqueueSeq);
      expect(await store.listWork(sid)).toHaveLength(1);
    });

    test("law 11: the same source key with other content is source_key_conflict", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "wake", { sourceKey: "sk-1" }));
      await expectTetherError(
        () => store.enqueueWork(workDraft(sid, "other payload", { sourceKey: "sk-1" })),
        "source_key_conflict",
      );
      await expectTetherError(
        () => store.enqueueWork(workDraft(sid, "wake", { sourceKey: "sk-1", slotPolicy: "join" })),
        "source_key_conflict",
      );
      expect((await store.listWork(sid)).map((b) => b.payload)).toEqual(["wake"]);
    });

    test("law 13: join batches with the same merge key are claimed together, in order", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      for (const p of ["j1", "j2", "j3"]) await store.enqueueWork(joinDraft(sid, p, "m"));
      const held = await leaseFor(store, sid);
      const claim = await store.claimReadyWork(fenceOf(held), "idle", 10);
      expect(payloads(claim)).toEqual(["j1", "j2", "j3"]);
      expect(claim?.batches.every((b) => b.claimId === claim.claimId)).toBe(true);
      expect(await store.claimReadyWork(fenceOf(held), "idle", 10)).toBeUndefined();
    });

    test("law 13: an exclusive batch is claimed alone", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "e1"));
      await store.enqueueWork(workDraft(sid, "e2"));
      await store.enqueueWork(joinDraft(sid, "j1", "m"));
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["e1"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["e2"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["j1"]);
    });

    test("law 13: a join leader never takes an exclusive batch with it", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(joinDraft(sid, "j1", "m"));
      await store.enqueueWork(workDraft(sid, "e1"));
      await store.enqueueWork(joinDraft(sid, "j2", "m"));
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["j1", "j2"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["e1"]);
    });

    test("law 13: an exclusive batch sharing the join batches' merge key is still claimed alone", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(joinDraft(sid, "j1", "m"));
      await store.enqueueWork(workDraft(sid, "e1", { mergeKey: "m" }));
      await store.enqueueWork(joinDraft(sid, "j2", "m"));
      await store.enqueueWork(workDraft(sid, "e2", { mergeKey: "m" }));
      await store.enqueueWork(joinDraft(sid, "j3", "m"));
      const held = await leaseFor(store, sid);
      // A join leader takes every join batch of its key, never the exclusive ones between them.
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual([
        "j1",
        "j2",
        "j3",
      ]);
      // An exclusive leader takes itself alone, though the next batch shares its key.
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["e1"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["e2"]);
    });

    test("law 13: an exclusive leader does not take join batches of its merge key", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "e1", { mergeKey: "m" }));
      await store.enqueueWork(joinDraft(sid, "j1", "m"));
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["e1"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["j1"]);
    });

    test("law 13: join batches with different merge keys are not joined", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(joinDraft(sid, "a1", "alpha"));
      await store.enqueueWork(joinDraft(sid, "b1", "beta"));
      await store.enqueueWork(joinDraft(sid, "a2", "alpha"));
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["a1", "a2"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["b1"]);
    });

    test("law 13: join batches with different delivery policies are not joined", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(joinDraft(sid, "now", "m"));
      await store.enqueueWork(
        joinDraft(sid, "later", "m", { deliveryPolicy: "after_current_turn_commit" }),
      );
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["now"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["later"]);
    });

    test("law 13: max_batches bounds a join claim", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      for (const p of ["j1", "j2", "j3", "j4", "j5"])
        await store.enqueueWork(joinDraft(sid, p, "m"));
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 2))).toEqual(["j1", "j2"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 2))).toEqual(["j3", "j4"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 2))).toEqual(["j5"]);
      expect(await store.claimReadyWork(fenceOf(held), "idle", 2)).toBeUndefined();
    });

    test("law 13: session commands are drained before turn work enqueued earlier", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "turn-1"));
      await store.enqueueWork(workDraft(sid, "command-1", { workClass: "session_command" }));
      await store.enqueueWork(workDraft(sid, "command-2", { workClass: "session_command" }));
      const held = await leaseFor(store, sid);
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        order.push(...payloads(await store.claimReadyWork(fenceOf(held), "idle", 10)));
      }
      expect(order).toEqual(["command-1", "command-2", "turn-1"]);
    });

    test("law 13: a join claim does not mix session commands with turn work", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(joinDraft(sid, "command", "m", { workClass: "session_command" }));
      await store.enqueueWork(joinDraft(sid, "turn", "m"));
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["command"]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual(["turn"]);
    });

    test("law 13: at an active-turn checkpoint only earliest_safe_boundary work is claimable; idle takes the rest", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(
        workDraft(sid, "after-commit", { deliveryPolicy: "after_current_turn_commit" }),
      );
      await store.enqueueWork(workDraft(sid, "safe-boundary"));
      const held = await leaseFor(store, sid);
      expect(
        payloads(await store.claimReadyWork(fenceOf(held), "active_turn_checkpoint", 10)),
      ).toEqual(["safe-boundary"]);
      expect(
        await store.claimReadyWork(fenceOf(held), "active_turn_checkpoint", 10),
      ).toBeUndefined();
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual([
        "after-commit",
      ]);
    });

    test("law 13: idle claims both delivery policies in enqueue order", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.enqueueWork(workDraft(sid, "safe-boundary"));
      await store.enqueueWork(
        workDraft(sid, "after-commit", { deliveryPolicy: "after_current_turn_commit" }),
      );
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual([
        "safe-boundary",
      ]);
      expect(payloads(await store.claimReadyWork(fenceOf(held), "idle", 10))).toEqual([
        "after-commit",
      ]);
    });

    test("law 13: nothing claimable is an empty claim (undefined), not an error", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await leaseFor(store, sid);
      expect(await store.claimReadyWork(fenceOf(held), "idle", 10)).toBeUndefined();
      expect(await store.listWork(sid)).toEqual([]);
    });

    test("law 15: a claim by ids reports each id as claimed_now or already_satisfied", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const ready = (await store.enqueueWork(workDraft(sid, "ready"))).batch;
      const done = (await store.enqueueWork(workDraft(sid, "done"))).batch;
      const cancelled = (await store.enqueueWork(workDraft(sid, "cancelled"))).batch;
      const mine = (await store.enqueueWork(workDraft(sid, "mine"))).batch;
      const held = await leaseFor(store, sid);
      const doneClaim = await store.claimWorkByIds(fenceOf(held), [done.batchId]);
      await store.commit(
        commitDraft(sid, 1, { completeQueueClaims: [queueClaimCompletion(doneClaim.claim!)] }),
      );
      await store.cancelWork(sid, [cancelled.batchId]);
      await store.claimWorkByIds(fenceOf(held), [mine.batchId]);

      const report = await store.claimWorkByIds(fenceOf(held), [
        ready.batchId,
        done.batchId,
        cancelled.batchId,
        mine.batchId,
      ]);
      expect(report.statuses).toEqual([
        { batchId: ready.batchId, status: "claimed_now" },
        { batchId: done.batchId, status: "already_satisfied" },
        { batchId: cancelled.batchId, status: "already_satisfied" },
        { batchId: mine.batchId, status: "claimed_now" },
      ]);
      expect(report.claim?.fencingToken).toBe(held.fencingToken);
      expect(report.claim?.batches.map((b) => b.batchId).sort()).toEqual(
        [ready.batchId, mine.batchId].sort(),
      );
      const listed = await store.listWork(sid);
      expect(listed.map((b) => [b.payload, b.state])).toEqual([
        ["ready", "claimed"],
        ["mine", "claimed"],
      ]);
    });

    test("law 15: a claim by ids naming an unknown id is unknown_batch_ids and claims nothing", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const known = (await store.enqueueWork(workDraft(sid, "known"))).batch;
      const held = await leaseFor(store, sid);
      const error = await expectTetherError(
        () => store.claimWorkByIds(fenceOf(held), [known.batchId, parseBatchId("no-such-batch")]),
        "unknown_batch_ids",
      );
      expect(error.violations.map((v) => v.field)).toContain("batch_ids");
      expect((await store.listWork(sid)).map((b) => b.state)).toEqual(["ready"]);
    });

    test("law 15: cancel takes only unclaimed batches and reports every id", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const ready = (await store.enqueueWork(workDraft(sid, "ready"))).batch;
      const claimed = (await store.enqueueWork(workDraft(sid, "claimed"))).batch;
      const completed = (await store.enqueueWork(workDraft(sid, "completed"))).batch;
      const cancelled = (await store.enqueueWork(workDraft(sid, "cancelled"))).batch;
      const held = await leaseFor(store, sid);
      await store.claimWorkByIds(fenceOf(held), [claimed.batchId]);
      const doneClaim = await store.claimWorkByIds(fenceOf(held), [completed.batchId]);
      await store.commit(
        commitDraft(sid, 1, { completeQueueClaims: [queueClaimCompletion(doneClaim.claim!)] }),
      );
      await store.cancelWork(sid, [cancelled.batchId]);
      const missing = parseBatchId("no-such-batch");

      const report = await store.cancelWork(sid, [
        ready.batchId,
        claimed.batchId,
        completed.batchId,
        cancelled.batchId,
        missing,
      ]);
      expect(report.outcomes).toEqual([
        { id: ready.batchId, status: "cancelled" },
        { id: claimed.batchId, status: "already_claimed" },
        { id: completed.batchId, status: "already_completed" },
        { id: cancelled.batchId, status: "already_cancelled" },
        { id: missing, status: "not_found" },
      ]);
      const listed = await store.listWork(sid);
      expect(listed.map((b) => [b.payload, b.state])).toEqual([["claimed", "claimed"]]);
    });
  });
}
