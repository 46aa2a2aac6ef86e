// startTurn: a turn start on an idle session in one step (ADR 0023). The input is stored as
// submitInput stores it; on a vacant session (no lease left behind, no parked turn) the caller
// also gets a fresh lease, the idle claim's inputs and the committed state, as tryClaimLease,
// claimInputs and loadSession would give them one after the other. Anything else (a live or an
// expired lease, a parked turn) leaves the session to the driver: only the submit happens.
// Runs on memory, Redis and Redis Cluster; the wire has no such operation (the runtime makes
// the separate calls there).
import { describe, expect, test } from "vitest";
import { inputClaimCompletion } from "../../../src/domain/inputs.js";
import { fenceOf } from "../../../src/domain/lease.js";
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
  waitingTurn,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

function startTurnOf(store: RuntimeStore): NonNullable<RuntimeStore["startTurn"]> {
  const start = store.startTurn?.bind(store);
  if (!start) throw new Error("this backend has no startTurn");
  return start;
}

export function describeTurnStartLaws(factory: StoreFactory): void {
  describe("turn start on an idle session", () => {
    const harness = useStoreHarness(factory);
    const claim = (name: string, maxInputs = 1) => ({
      owner: opaqueOwner(name),
      ttlMs: LONG_TTL_MS,
      maxInputs,
    });

    test("the input keeps its submitter's trace, claimed with it, and a retry under another trace is the same input", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const traceA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const traceB = "00-5c0ffee05c0ffee05c0ffee05c0ffee0-1111111111111111-01";
      const draft = (trace: string) => ({ ...inputDraft(sid, "hello"), sourceKey: "k", trace });
      const receipt = await startTurnOf(store)(draft(traceA), claim("a"));
      expect(receipt.submitted.input.trace).toBe(traceA);
      expect(receipt.started?.inputs?.inputs.map((i) => [i.payload, i.trace])).toEqual([
        ["hello", traceA],
      ]);
      const again = await startTurnOf(store)(draft(traceB), claim("b"));
      expect(again.submitted.deduplicated).toBe(true);
      expect(again.submitted.input.inputId).toBe(receipt.submitted.input.inputId);
      expect(again.submitted.input.trace).toBe(traceA);
    });

    test("a vacant session: the input is stored, the lease acquired, the input claimed and the state read, in one step", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const receipt = await startTurnOf(store)(inputDraft(sid, "hello"), claim("a"));
      expect(receipt.submitted.deduplicated).toBe(false);
      expect(receipt.submitted.sessionBusy).toBe(false);
      const started = receipt.started;
      expect(started?.lease.owner.ownerId).toBe("owner-a");
      // The lease is the store's current one.
      const current = await store.currentLease(sid);
      expect(current?.fencingToken).toBe(started?.lease.fencingToken);
      expect(current?.leaseToken).toBe(started?.lease.leaseToken);
      expect(started?.inputs?.fencingToken).toBe(started?.lease.fencingToken);
      expect(started?.inputs?.inputs.map((i) => [i.inputId, i.payload, i.state])).toEqual([
        [receipt.submitted.input.inputId, "hello", "claimed"],
      ]);
      // The input created the session (head 1), as submitInput does.
      expect(started?.snapshot?.headRevision).toBe(1);
      expect(started?.snapshot?.messages).toEqual([]);
      // The claim is held under the fence: a second idle claim finds nothing, and the commit
      // that completes it goes through.
      const fence = fenceOf(started!.lease);
      expect(await store.claimInputs(fence, { kind: "idle" }, 8)).toBeUndefined();
      await store.commit(
        commitDraft(sid, 1, {
          appendMessages: ["turn"],
          completeInputClaims: [inputClaimCompletion(started!.inputs!)],
        }),
      );
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "released" });
    });

    test("after a release the session is vacant again; the state comes after the caller's mark", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = await startTurnOf(store)(inputDraft(sid, "one"), claim("a"));
      await store.commit(
        commitDraft(sid, 1, {
          appendMessages: ["m1", "m2"],
          completeInputClaims: [inputClaimCompletion(first.started!.inputs!)],
        }),
      );
      expect(await store.releaseIfIdle(fenceOf(first.started!.lease))).toEqual({
        kind: "released",
      });
      const epoch = (await store.loadSession(sid))!.transcriptEpoch;
      const second = await startTurnOf(store)(inputDraft(sid, "two"), {
        ...claim("b"),
        since: { epoch, messageCount: 1 },
      });
      expect(second.started?.lease.owner.ownerId).toBe("owner-b");
      expect(second.started!.lease.fencingToken).toBeGreaterThan(first.started!.lease.fencingToken);
      expect(second.started?.inputs?.inputs.map((i) => i.payload)).toEqual(["two"]);
      expect(second.started?.snapshot?.headRevision).toBe(2);
      expect(second.started?.snapshot?.messagesFrom).toBe(1);
      expect(second.started?.snapshot?.messages).toEqual(["m2"]);
    });

    test("the idle claim takes the oldest open input first, at most maxInputs", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const older = await store.submitInput(inputDraft(sid, "older"));
      const receipt = await startTurnOf(store)(inputDraft(sid, "newer"), claim("a"));
      expect(receipt.started?.inputs?.inputs.map((i) => i.inputId)).toEqual([older.input.inputId]);
      const fence = fenceOf(receipt.started!.lease);
      const rest = await store.claimInputs(fence, { kind: "idle" }, 8);
      expect(rest?.inputs.map((i) => i.payload)).toEqual(["newer"]);
    });

    test("the idle claim takes exactly the next-turn inputs: a steered input left behind stays pending", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      // A steer for a turn that ended before taking it (its holder released without a commit):
      // the oldest open input, and still not something a new turn's idle claim may take.
      const steer = await store.submitInput(
        inputDraft(sid, "steer", activeTurn("t-gone", "after_work")),
      );
      const older = await store.submitInput(inputDraft(sid, "older"));
      const receipt = await startTurnOf(store)(inputDraft(sid, "newer"), claim("a", 8));
      expect(receipt.started?.inputs?.inputs.map((i) => i.payload)).toEqual(["older", "newer"]);
      expect(receipt.started?.inputs?.inputs.map((i) => i.inputId)).toEqual([
        older.input.inputId,
        receipt.submitted.input.inputId,
      ]);
      const inputs = await store.listInputs(sid);
      expect(inputs.map((i) => [i.inputId, i.state])).toEqual([
        [steer.input.inputId, "pending"],
        [older.input.inputId, "claimed"],
        [receipt.submitted.input.inputId, "claimed"],
      ]);
      expect(inputs[0]?.delivery).toEqual(activeTurn("t-gone", "after_work"));
    });

    test("with room for one, the idle claim skips an older steered input for the next-turn one", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "steer", activeTurn("t-gone", "after_work")));
      const receipt = await startTurnOf(store)(inputDraft(sid, "next"), claim("a", 1));
      expect(receipt.started?.inputs?.inputs.map((i) => i.payload)).toEqual(["next"]);
      const steer = (await store.listInputs(sid)).find((i) => i.payload === "steer");
      expect(steer?.state).toBe("pending");
    });

    test("a live lease: only the submit happens, and it says the session is busy", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const holder = await acquire(store, sid, opaqueOwner("holder"), LONG_TTL_MS);
      const receipt = await startTurnOf(store)(inputDraft(sid, "queued"), claim("a"));
      expect(receipt.started).toBeUndefined();
      expect(receipt.submitted.sessionBusy).toBe(true);
      expect((await store.currentLease(sid))?.fencingToken).toBe(holder.fencingToken);
      // The input waits, unclaimed, for the holder.
      const inputs = await store.listInputs(sid);
      expect(inputs.map((i) => [i.payload, i.state])).toEqual([["queued", "pending"]]);
    });

    test("the caller's own live lease is not re-entered: only the submit happens", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const owner = opaqueOwner("a");
      const held = await acquire(store, sid, owner, LONG_TTL_MS);
      const receipt = await startTurnOf(store)(inputDraft(sid, "x"), { ...claim("a"), owner });
      expect(receipt.started).toBeUndefined();
      expect((await store.currentLease(sid))?.leaseToken).toBe(held.leaseToken);
    });

    test("an expired lease left behind: only the submit happens (its holder's last turn may want announcing)", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      await acquire(store, sid, opaqueOwner("gone"), SHORT_TTL_MS);
      await advanceTime(PAST_SHORT_TTL_MS);
      const receipt = await startTurnOf(store)(inputDraft(sid, "x"), claim("a"));
      expect(receipt.started).toBeUndefined();
      expect(receipt.submitted.sessionBusy).toBe(false);
      expect(await store.currentLease(sid)).toBeUndefined();
    });

    test("a parked turn: only the submit happens, and the session is busy", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("p"), LONG_TTL_MS));
      await store.parkTurn(fence, waitingTurn("t-parked"));
      const receipt = await startTurnOf(store)(inputDraft(sid, "x"), claim("a"));
      expect(receipt.started).toBeUndefined();
      expect(receipt.submitted.sessionBusy).toBe(true);
      expect(await store.currentLease(sid)).toBeUndefined();
    });

    test("a retried submit with its source key is deduplicated; a vacant session still starts", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = await store.submitInput(inputDraft(sid, "same", undefined, "req-1"));
      const receipt = await startTurnOf(store)(
        inputDraft(sid, "same", undefined, "req-1"),
        claim("a"),
      );
      expect(receipt.submitted.deduplicated).toBe(true);
      expect(receipt.submitted.input.inputId).toBe(first.input.inputId);
      expect(receipt.started?.inputs?.inputs.map((i) => i.inputId)).toEqual([first.input.inputId]);
      expect((await store.listInputs(sid)).length).toBe(1);
    });

    test("other content under a seen source key is a conflict, and nothing is claimed", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "one", undefined, "req-1"));
      await expectTetherError(
        () => startTurnOf(store)(inputDraft(sid, "two", undefined, "req-1"), claim("a")),
        "source_key_conflict",
      );
      expect(await store.currentLease(sid)).toBeUndefined();
    });

    test("two starts at once: one gets the session, the other's input waits for it", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const [a, b] = await Promise.all([
        startTurnOf(store)(inputDraft(sid, "a"), claim("a")),
        startTurnOf(store)(inputDraft(sid, "b"), claim("b")),
      ]);
      const winners = [a, b].filter((r) => r.started !== undefined);
      expect(winners.length).toBe(1);
      const loser = winners[0] === a ? b : a;
      expect(loser.submitted.sessionBusy).toBe(true);
      expect(winners[0]!.started!.inputs!.inputs.length).toBe(1);
    });

    test("active-turn input is refused with the field named", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const error = await expectTetherError(
        () =>
          startTurnOf(store)(
            inputDraft(sid, "x", { kind: "active_turn", turnId: "t", minBoundary: "after_work" }),
            claim("a"),
          ),
        "invalid_argument",
      );
      expect(error.message).toContain("delivery");
    });
  });
}
