// Laws 16-19: pending turn inputs are ordered and idempotent, cancel reports typed outcomes,
// admission follows the turn's checkpoints, and missed steers become next-turn input once.
import { describe, expect, test } from "vitest";
import { parseInputId, type SessionId } from "../../../src/domain/ids.js";
import { inputClaimCompletion, type TurnInputClaim } from "../../../src/domain/inputs.js";
import { fenceOf, type SessionExecutionLease } from "../../../src/domain/lease.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  activeTurn,
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  NEXT_TURN,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
  waitingTurn,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

function payloads(claim: TurnInputClaim | undefined): string[] {
  return claim?.inputs.map((i) => i.payload) ?? [];
}

async function leaseFor(store: RuntimeStore, sid: SessionId): Promise<SessionExecutionLease> {
  return acquire(store, sid, opaqueOwner("worker"), LONG_TTL_MS);
}

// Submitters' traceparents (W3C): two callers of their own.
const TRACE_A = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE_B = "00-5c0ffee05c0ffee05c0ffee05c0ffee0-1111111111111111-01";

export interface InputLawOptions {
  /**
   * False where the backend cannot be handed a trace to keep: the wire, whose SubmitInput keeps
   * its own RPC span, and only on a server with tracing on (the conformance server has none).
   */
  keepsTrace?: boolean;
}

export function describeInputLaws(factory: StoreFactory, options: InputLawOptions = {}): void {
  const keepsTrace = options.keepsTrace !== false;
  describe("turn inputs", () => {
    const harness = useStoreHarness(factory);

    test("law 16: inputs are ordered by a per-session seq", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const seqs: number[] = [];
      for (const p of ["one", "two", "three"]) {
        seqs.push((await store.submitInput(inputDraft(sid, p))).input.seq);
      }
      expect(seqs).toEqual([1, 2, 3]);
      const listed = await store.listInputs(sid);
      expect(listed.map((i) => [i.payload, i.seq, i.state])).toEqual([
        ["one", 1, "pending"],
        ["two", 2, "pending"],
        ["three", 3, "pending"],
      ]);
      const otherSid = freshSessionId();
      expect((await store.submitInput(inputDraft(otherSid, "elsewhere"))).input.seq).toBe(1);
    });

    test("law 16: the same source key returns the existing input for the same content and conflicts otherwise", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = await store.submitInput(inputDraft(sid, "hi", NEXT_TURN, "msg-1"));
      expect(first.deduplicated).toBe(false);
      const again = await store.submitInput(inputDraft(sid, "hi", NEXT_TURN, "msg-1"));
      expect(again.deduplicated).toBe(true);
      expect(again.input.inputId).toBe(first.input.inputId);
      await expectTetherError(
        () => store.submitInput(inputDraft(sid, "something else", NEXT_TURN, "msg-1")),
        "source_key_conflict",
      );
      expect((await store.listInputs(sid)).map((i) => i.payload)).toEqual(["hi"]);
    });

    test("law 16: the content is the payload: the same payload delivered otherwise is the stored input", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      // A steered input whose turn has ended, retried as a next-turn input (and the other way).
      const steered = await store.submitInput(
        inputDraft(sid, "hi", activeTurn("t-old", "after_work"), "msg-1"),
      );
      const retried = await store.submitInput(inputDraft(sid, "hi", NEXT_TURN, "msg-1"));
      expect(retried.deduplicated).toBe(true);
      expect(retried.input.inputId).toBe(steered.input.inputId);
      expect(retried.input.delivery).toEqual(activeTurn("t-old", "after_work"));
      const queued = await store.submitInput(inputDraft(sid, "yo", NEXT_TURN, "msg-2"));
      const steeredRetry = await store.submitInput(
        inputDraft(sid, "yo", activeTurn("t-new", "after_work"), "msg-2"),
      );
      expect(steeredRetry.input.inputId).toBe(queued.input.inputId);
      await expectTetherError(
        () =>
          store.submitInput(inputDraft(sid, "other", activeTurn("t-old", "after_work"), "msg-1")),
        "source_key_conflict",
      );
      expect((await store.listInputs(sid)).map((i) => [i.payload, i.delivery.kind])).toEqual([
        ["hi", "active_turn"],
        ["yo", "next_turn"],
      ]);
    });

    test("law 16: an input's trace is kept with it and does not change what counts as the same content", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const traced = (payload: string, trace: string) => ({
        ...inputDraft(sid, payload, NEXT_TURN, "msg-1"),
        trace,
      });
      const first = await store.submitInput(traced("hi", TRACE_A));
      // A retry from another request (another trace) is the same input, still under the first.
      const again = await store.submitInput(traced("hi", TRACE_B));
      expect(again.deduplicated).toBe(true);
      expect(again.input.inputId).toBe(first.input.inputId);
      // Other content under the same trace is still other content.
      await expectTetherError(
        () => store.submitInput(traced("something else", TRACE_A)),
        "source_key_conflict",
      );
      const untraced = await store.submitInput(inputDraft(sid, "plain"));
      const expected = keepsTrace ? TRACE_A : undefined;
      expect(first.input.trace).toBe(expected);
      expect(again.input.trace).toBe(expected);
      expect(untraced.input.trace).toBeUndefined();
      const listed = await store.listInputs(sid);
      expect(listed.map((i) => [i.payload, i.trace])).toEqual([
        ["hi", expected],
        ["plain", undefined],
      ]);
      // The claim hands it to the turn that consumes the input, payload untouched.
      const lease = await leaseFor(store, sid);
      const claim = await store.claimInputs(fenceOf(lease), { kind: "idle" }, 8);
      expect(claim?.inputs.map((i) => [i.payload, i.trace])).toEqual([
        ["hi", expected],
        ["plain", undefined],
      ]);
    });

    test("law 16: a submit says whether a turn held the session (a live lease or a parked turn)", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      expect((await store.submitInput(inputDraft(sid, "idle"))).sessionBusy).toBe(false);
      const held = await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS);
      expect((await store.submitInput(inputDraft(sid, "held"))).sessionBusy).toBe(true);
      // A retry of an input answers as of now, like its first submit.
      const retried = await store.submitInput(inputDraft(sid, "held", NEXT_TURN, "src-1"));
      expect(retried.sessionBusy).toBe(true);
      await advanceTime(PAST_SHORT_TTL_MS);
      // An expired lease holds nothing.
      expect((await store.submitInput(inputDraft(sid, "expired"))).sessionBusy).toBe(false);
      const again = await store.submitInput(inputDraft(sid, "held", NEXT_TURN, "src-1"));
      expect(again).toMatchObject({ deduplicated: true, sessionBusy: false });
      const parking = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await store.parkTurn(parking, waitingTurn("t-parked"));
      // Parking released the lease; the parked turn still holds the session.
      expect(await store.currentLease(sid)).toBeUndefined();
      expect((await store.submitInput(inputDraft(sid, "parked"))).sessionBusy).toBe(true);
      expect(held.fencingToken).toBeLessThan(parking.fencingToken);
    });

    test("law 17: one cancel call reports cancelled, already_claimed, already_completed, already_cancelled and not_found", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const completed = (await store.submitInput(inputDraft(sid, "completed"))).input;
      const held = await leaseFor(store, sid);
      const done = await store.claimInputs(fenceOf(held), { kind: "idle" }, 1);
      await store.commit(
        commitDraft(sid, 1, { completeInputClaims: [inputClaimCompletion(done!)] }),
      );
      const claimed = (await store.submitInput(inputDraft(sid, "claimed"))).input;
      await store.claimInputs(fenceOf(held), { kind: "idle" }, 1);
      const pending = (await store.submitInput(inputDraft(sid, "pending"))).input;
      const cancelled = (await store.submitInput(inputDraft(sid, "cancelled"))).input;
      await store.cancelInputs(sid, { kind: "ids", inputIds: [cancelled.inputId] });
      const missing = parseInputId("no-such-input");

      const report = await store.cancelInputs(sid, {
        kind: "ids",
        inputIds: [pending.inputId, claimed.inputId, completed.inputId, cancelled.inputId, missing],
      });
      expect(report.outcomes).toEqual([
        { id: pending.inputId, status: "cancelled" },
        { id: claimed.inputId, status: "already_claimed" },
        { id: completed.inputId, status: "already_completed" },
        { id: cancelled.inputId, status: "already_cancelled" },
        { id: missing, status: "not_found" },
      ]);
      expect((await store.listInputs(sid)).map((i) => [i.payload, i.state])).toEqual([
        ["claimed", "claimed"],
      ]);
    });

    test("law 17: suffix cancel takes the anchor and every later input, reporting tombstones too", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const ids = [];
      for (const p of ["i1", "i2", "i3", "i4"]) {
        ids.push((await store.submitInput(inputDraft(sid, p))).input.inputId);
      }
      const [i1, i2, i3, i4] = ids as [
        (typeof ids)[number],
        (typeof ids)[number],
        (typeof ids)[number],
        (typeof ids)[number],
      ];
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimInputs(fenceOf(held), { kind: "idle" }, 1))).toEqual(["i1"]);
      await store.cancelInputs(sid, { kind: "ids", inputIds: [i3] });

      const fromTwo = await store.cancelInputs(sid, { kind: "suffix", fromInputId: i2 });
      expect(fromTwo.outcomes).toEqual([
        { id: i2, status: "cancelled" },
        { id: i3, status: "already_cancelled" },
        { id: i4, status: "cancelled" },
      ]);
      expect((await store.listInputs(sid)).map((i) => [i.payload, i.state])).toEqual([
        ["i1", "claimed"],
      ]);

      const fromOne = await store.cancelInputs(sid, { kind: "suffix", fromInputId: i1 });
      expect(fromOne.outcomes).toEqual([
        { id: i1, status: "already_claimed" },
        { id: i2, status: "already_cancelled" },
        { id: i3, status: "already_cancelled" },
        { id: i4, status: "already_cancelled" },
      ]);
    });

    test("law 17: suffix cancel from an unknown anchor reports it not_found and cancels nothing", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "kept"));
      const missing = parseInputId("no-such-input");
      const report = await store.cancelInputs(sid, { kind: "suffix", fromInputId: missing });
      expect(report.outcomes).toEqual([{ id: missing, status: "not_found" }]);
      expect((await store.listInputs(sid)).map((i) => i.state)).toEqual(["pending"]);
    });

    test("law 18: an after_work checkpoint admits after_work inputs but not before_completion ones", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "late", activeTurn("t1", "before_completion")));
      await store.submitInput(inputDraft(sid, "early", activeTurn("t1", "after_work")));
      const held = await leaseFor(store, sid);
      const afterWork = { kind: "checkpoint", turnId: "t1", checkpoint: "after_work" } as const;
      expect(payloads(await store.claimInputs(fenceOf(held), afterWork, 10))).toEqual(["early"]);
      expect(await store.claimInputs(fenceOf(held), afterWork, 10)).toBeUndefined();
      const beforeCompletion = {
        kind: "checkpoint",
        turnId: "t1",
        checkpoint: "before_completion",
      } as const;
      expect(payloads(await store.claimInputs(fenceOf(held), beforeCompletion, 10))).toEqual([
        "late",
      ]);
    });

    test("law 18: a before_completion checkpoint admits both boundaries in seq order", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "late", activeTurn("t1", "before_completion")));
      await store.submitInput(inputDraft(sid, "early", activeTurn("t1", "after_work")));
      const held = await leaseFor(store, sid);
      const claim = await store.claimInputs(
        fenceOf(held),
        { kind: "checkpoint", turnId: "t1", checkpoint: "before_completion" },
        10,
      );
      expect(payloads(claim)).toEqual(["late", "early"]);
      expect(claim?.fencingToken).toBe(held.fencingToken);
    });

    test("law 18: next-turn inputs are claimed only when idle, never at a checkpoint", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "next"));
      await store.submitInput(inputDraft(sid, "steer", activeTurn("t1", "after_work")));
      const held = await leaseFor(store, sid);
      const checkpoint = {
        kind: "checkpoint",
        turnId: "t1",
        checkpoint: "before_completion",
      } as const;
      expect(payloads(await store.claimInputs(fenceOf(held), checkpoint, 10))).toEqual(["steer"]);
      expect(await store.claimInputs(fenceOf(held), checkpoint, 10)).toBeUndefined();
      expect(payloads(await store.claimInputs(fenceOf(held), { kind: "idle" }, 10))).toEqual([
        "next",
      ]);
    });

    test("law 18: active-turn inputs are not claimed when idle", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "steer", activeTurn("t1", "after_work")));
      const held = await leaseFor(store, sid);
      expect(await store.claimInputs(fenceOf(held), { kind: "idle" }, 10)).toBeUndefined();
      expect((await store.listInputs(sid)).map((i) => i.state)).toEqual(["pending"]);
    });

    test("law 18: inputs steered into another turn are not admitted", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "for-t2", activeTurn("t2", "after_work")));
      const held = await leaseFor(store, sid);
      expect(
        await store.claimInputs(
          fenceOf(held),
          { kind: "checkpoint", turnId: "t1", checkpoint: "before_completion" },
          10,
        ),
      ).toBeUndefined();
      expect(
        payloads(
          await store.claimInputs(
            fenceOf(held),
            { kind: "checkpoint", turnId: "t2", checkpoint: "after_work" },
            10,
          ),
        ),
      ).toEqual(["for-t2"]);
    });

    test("law 18: maxInputs bounds an input claim", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      for (const p of ["i1", "i2", "i3"]) await store.submitInput(inputDraft(sid, p));
      const held = await leaseFor(store, sid);
      expect(payloads(await store.claimInputs(fenceOf(held), { kind: "idle" }, 2))).toEqual([
        "i1",
        "i2",
      ]);
      expect(payloads(await store.claimInputs(fenceOf(held), { kind: "idle" }, 2))).toEqual(["i3"]);
    });

    test("law 18: claiming inputs with a stale fence is session_execution_lease_expired", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "hi"));
      const held = await leaseFor(store, sid);
      await store.releaseLease(fenceOf(held));
      await expectTetherError(
        () => store.claimInputs(fenceOf(held), { kind: "idle" }, 10),
        "session_execution_lease_expired",
      );
      expect((await store.listInputs(sid)).map((i) => i.state)).toEqual(["pending"]);
    });

    test("law 19: deferActiveInputs moves pending active inputs to next_turn exactly once", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const a = (await store.submitInput(inputDraft(sid, "a", activeTurn("t1", "after_work"))))
        .input;
      const b = (
        await store.submitInput(inputDraft(sid, "b", activeTurn("t1", "before_completion")))
      ).input;
      const other = (
        await store.submitInput(inputDraft(sid, "other", activeTurn("t2", "after_work")))
      ).input;
      const held = await leaseFor(store, sid);
      const first = await store.deferActiveInputs(fenceOf(held), "t1");
      expect([...first.deferredInputIds].sort()).toEqual([a.inputId, b.inputId].sort());
      const second = await store.deferActiveInputs(fenceOf(held), "t1");
      expect(second.deferredInputIds).toEqual([]);

      const listed = await store.listInputs(sid);
      expect(listed.map((i) => [i.payload, i.delivery.kind, i.deferred])).toEqual([
        ["a", "next_turn", true],
        ["b", "next_turn", true],
        ["other", "active_turn", false],
      ]);
      expect(listed[2]?.inputId).toBe(other.inputId);
      expect(
        await store.claimInputs(
          fenceOf(held),
          { kind: "checkpoint", turnId: "t1", checkpoint: "before_completion" },
          10,
        ),
      ).toBeUndefined();
      expect(payloads(await store.claimInputs(fenceOf(held), { kind: "idle" }, 10))).toEqual([
        "a",
        "b",
      ]);
    });

    test("law 19: a commit naming its turn defers the turn's pending steers in the same step", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "question"));
      const held = await leaseFor(store, sid);
      const claim = await store.claimInputs(fenceOf(held), { kind: "idle" }, 10);
      const late = (
        await store.submitInput(inputDraft(sid, "late", activeTurn("t1", "after_work")))
      ).input;
      await store.submitInput(inputDraft(sid, "other", activeTurn("t2", "after_work")));
      await store.commit(
        commitDraft(sid, 1, {
          appendMessages: ["turn"],
          advanceTurn: true,
          completeInputClaims: claim ? [inputClaimCompletion(claim)] : [],
          deferTurnInputs: "t1",
        }),
      );
      const listed = await store.listInputs(sid);
      expect(listed.map((i) => [i.payload, i.delivery.kind, i.deferred])).toEqual([
        ["late", "next_turn", true],
        ["other", "active_turn", false],
      ]);
      expect(listed[0]?.inputId).toBe(late.inputId);
      // A commit that does not apply (stale head) defers nothing.
      await store.submitInput(inputDraft(sid, "later", activeTurn("t2", "after_work")));
      await expectTetherError(
        () => store.commit(commitDraft(sid, 1, { deferTurnInputs: "t2" })),
        "head_revision_conflict",
      );
      expect(
        (await store.listInputs(sid)).filter((i) => i.delivery.kind === "next_turn"),
      ).toHaveLength(1);
    });

    test("law 19: an active input already admitted at a checkpoint is not deferred", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "admitted", activeTurn("t1", "after_work")));
      const missed = (
        await store.submitInput(inputDraft(sid, "missed", activeTurn("t1", "before_completion")))
      ).input;
      const held = await leaseFor(store, sid);
      await store.claimInputs(
        fenceOf(held),
        { kind: "checkpoint", turnId: "t1", checkpoint: "after_work" },
        10,
      );
      const report = await store.deferActiveInputs(fenceOf(held), "t1");
      expect(report.deferredInputIds).toEqual([missed.inputId]);
      expect(
        (await store.listInputs(sid)).map((i) => [i.payload, i.state, i.delivery.kind]),
      ).toEqual([
        ["admitted", "claimed", "active_turn"],
        ["missed", "pending", "next_turn"],
      ]);
    });

    test("law 19: deferring with a stale fence is session_execution_lease_expired and moves nothing", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "steer", activeTurn("t1", "after_work")));
      const held = await leaseFor(store, sid);
      await store.releaseLease(fenceOf(held));
      await expectTetherError(
        () => store.deferActiveInputs(fenceOf(held), "t1"),
        "session_execution_lease_expired",
      );
      expect((await store.listInputs(sid)).map((i) => i.delivery.kind)).toEqual(["active_turn"]);
    });
  });
}
