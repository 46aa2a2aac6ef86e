// Client tool calls: the holder records the calls its turn waits on, any replica stores the
// first answer for each (later answers, unknown calls and closed calls are ignored), and only the
// live fence records or closes. Every law runs on memory, Redis, Redis Cluster and the wire.
import { describe, expect, test } from "vitest";
import { fenceOf, type LeaseFence } from "../../../src/domain/lease.js";
import type { ClientToolResult, ToolWait } from "../../../src/domain/tool-calls.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  freshSessionId,
  LONG_TTL_MS,
  opaqueOwner,
  PAST_SHORT_TTL_MS,
  SHORT_TTL_MS,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const TURN = "turn-1";
const result = (callId: string): ToolWait => ({ kind: "result", callId });
const answer = (callId: string, output = `out-${callId}`): ClientToolResult => ({
  callId,
  output,
  isError: false,
});

async function heldWithCalls(store: RuntimeStore, ...callIds: string[]): Promise<LeaseFence> {
  const sid = freshSessionId();
  const fence = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
  await store.recordToolCalls(fence, TURN, callIds.map(result));
  return fence;
}

export function describeToolCallLaws(factory: StoreFactory): void {
  describe("client tool calls", () => {
    const harness = useStoreHarness(factory);

    test("recorded calls are pending; the first answer is accepted and kept", async () => {
      const { store } = harness();
      const fence = await heldWithCalls(store, "c1", "c2");
      const sid = fence.sessionId;
      expect(await store.readToolCalls(sid, TURN)).toEqual(
        expect.arrayContaining([
          { kind: "result", callId: "c1", status: "pending" },
          { kind: "result", callId: "c2", status: "pending" },
        ]),
      );
      expect(await store.answerToolCalls(sid, TURN, [answer("c1", "first")])).toEqual({
        accepted: ["c1"],
        ignored: [],
      });
      expect(await store.answerToolCalls(sid, TURN, [answer("c1", "second")])).toEqual({
        accepted: [],
        ignored: ["c1"],
      });
      const states = await store.readToolCalls(sid, TURN);
      expect(states).toContainEqual({
        kind: "result",
        callId: "c1",
        status: "answered",
        answer: { callId: "c1", output: "first", isError: false },
      });
    });

    test("a duplicate within one request, and a call the turn never recorded, are ignored", async () => {
      const { store } = harness();
      const fence = await heldWithCalls(store, "c1");
      const report = await store.answerToolCalls(fence.sessionId, TURN, [
        answer("c1"),
        answer("c1", "again"),
        answer("never-asked"),
      ]);
      expect(report).toEqual({ accepted: ["c1"], ignored: ["c1", "never-asked"] });
    });

    test("concurrent answers for one call: exactly one is accepted", async () => {
      const { store } = harness();
      const fence = await heldWithCalls(store, "c1");
      const reports = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.answerToolCalls(fence.sessionId, TURN, [answer("c1", `answer-${i}`)]),
        ),
      );
      expect(reports.flatMap((r) => r.accepted)).toEqual(["c1"]);
      expect(reports.flatMap((r) => r.ignored)).toHaveLength(7);
    });

    test("a turn with no records is turn_not_running and stores nothing", async () => {
      const { store } = harness();
      const fence = await heldWithCalls(store, "c1");
      await expectTetherError(
        () => store.answerToolCalls(fence.sessionId, "other-turn", [answer("c1")]),
        "turn_not_running",
      );
      expect(await store.readToolCalls(fence.sessionId, "other-turn")).toEqual([]);
    });

    test("closing makes later answers ignored and keeps answers already given", async () => {
      const { store } = harness();
      const fence = await heldWithCalls(store, "c1", "c2");
      await store.answerToolCalls(fence.sessionId, TURN, [answer("c1")]);
      const closed = await store.closeToolCalls(fence, TURN, [result("c2")]);
      expect(closed).toEqual([{ kind: "result", callId: "c2", status: "closed" }]);
      expect(await store.answerToolCalls(fence.sessionId, TURN, [answer("c2")])).toEqual({
        accepted: [],
        ignored: ["c2"],
      });
      const all = await store.closeToolCalls(fence, TURN);
      expect(all).toEqual(
        expect.arrayContaining([
          { kind: "result", callId: "c1", status: "answered", answer: answer("c1") },
          { kind: "result", callId: "c2", status: "closed" },
        ]),
      );
    });

    test("recording a call again keeps its state (a re-run finds the earlier answer)", async () => {
      const { store } = harness();
      const fence = await heldWithCalls(store, "c1");
      await store.answerToolCalls(fence.sessionId, TURN, [answer("c1")]);
      expect(await store.recordToolCalls(fence, TURN, [result("c1"), result("c2")])).toEqual([
        { kind: "result", callId: "c1", status: "answered", answer: answer("c1") },
        { kind: "result", callId: "c2", status: "pending" },
      ]);
    });

    test("a successor generation records and closes; the old fence changes nothing", async () => {
      const { store, advanceTime } = harness();
      const sid = freshSessionId();
      const old = fenceOf(await acquire(store, sid, opaqueOwner("a"), SHORT_TTL_MS));
      await store.recordToolCalls(old, TURN, [result("c1")]);
      await advanceTime(PAST_SHORT_TTL_MS);
      const next = fenceOf(await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS));
      expect(next.fencingToken).toBeGreaterThan(old.fencingToken);
      const before = await store.readToolCalls(sid, TURN);
      await expectTetherError(
        () => store.recordToolCalls(old, TURN, [result("c9")]),
        "session_execution_lease_expired",
      );
      await expectTetherError(
        () => store.closeToolCalls(old, TURN),
        "session_execution_lease_expired",
      );
      expect(await store.readToolCalls(sid, TURN)).toEqual(before);
      expect(await store.recordToolCalls(next, TURN, [result("c1")])).toEqual([
        { kind: "result", callId: "c1", status: "pending" },
      ]);
    });

    test("a released or forged fence neither records nor closes", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = fenceOf(await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS));
      await store.recordToolCalls(held, TURN, [result("c1")]);
      for (const stale of [
        { ...held, leaseToken: "forged" },
        { ...held, fencingToken: held.fencingToken + 1 },
      ]) {
        await expectTetherError(
          () => store.recordToolCalls(stale, TURN, [result("c2")]),
          "session_execution_lease_expired",
        );
        await expectTetherError(
          () => store.closeToolCalls(stale, TURN),
          "session_execution_lease_expired",
        );
      }
      await store.releaseLease(held);
      await expectTetherError(
        () => store.closeToolCalls(held, TURN),
        "session_execution_lease_expired",
      );
      expect(await store.readToolCalls(sid, TURN)).toEqual([
        { kind: "result", callId: "c1", status: "pending" },
      ]);
    });

    test("bad input is invalid_argument naming the field", async () => {
      const { store } = harness();
      const fence = await heldWithCalls(store, "c1");
      await expectTetherError(
        () => store.answerToolCalls(fence.sessionId, TURN, []),
        "invalid_argument",
      );
      await expectTetherError(
        () => store.answerToolCalls(fence.sessionId, TURN, [answer("")]),
        "invalid_argument",
      );
      await expectTetherError(
        () => store.recordToolCalls(fence, "", [result("c1")]),
        "invalid_argument",
      );
      await expectTetherError(() => store.recordToolCalls(fence, TURN, []), "invalid_argument");
    });
  });
}
