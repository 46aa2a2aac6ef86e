// Turn records (domain/turn-records.ts, ADR 0037): the steps that already start, park, resume and
// commit a turn write its record, so a client can list a session's turns and read one; the newest
// thousand are kept and they go with the session. Runs on memory, Redis and Redis Cluster.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { inputClaimCompletion } from "../../../src/domain/inputs.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { queueClaimCompletion } from "../../../src/domain/queue.js";
import type {
  TurnOutcomeSummary,
  TurnRecord,
  TurnRecordQuery,
} from "../../../src/domain/turn-records.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { turnIdOfInput } from "../../../src/ports/turn-ids.js";
import { acquire, expectTetherError } from "../support/expectations.js";
import {
  LONG_TTL_MS,
  commitDraft,
  freshSessionId,
  inputDraft,
  opaqueOwner,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const USAGE = {
  inputTokens: 11,
  outputTokens: 7,
  cacheReadTokens: 3,
  cacheWriteTokens: 0,
  reasoningTokens: 2,
};
const TOOL_ERROR: TurnOutcomeSummary = {
  kind: "stopped",
  reason: "tool_error",
  toolName: "lookup",
  callId: "c1",
  code: "not_found",
  message: "no such row",
};

function reads(store: RuntimeStore) {
  const absent = () => new Error("this backend keeps no turn records");
  return {
    one: (sid: SessionId, turnId: string) => {
      if (!store.readTurn) throw absent();
      return store.readTurn(sid, turnId);
    },
    page: (sid: SessionId, query: TurnRecordQuery) => {
      if (!store.readTurns) throw absent();
      return store.readTurns(sid, query);
    },
  };
}

/** A turn that consumes only queued work, committed with `outcome`: its record starts there. */
async function commitWorkTurn(
  store: RuntimeStore,
  sid: SessionId,
  turnId: string,
  outcome: TurnOutcomeSummary,
): Promise<void> {
  await store.enqueueWork(workDraft(sid, turnId));
  const fence = fenceOf(await acquire(store, sid, opaqueOwner("worker"), LONG_TTL_MS));
  const claim = await store.claimReadyWork(fence, "idle", 1);
  if (!claim) throw new Error("nothing claimed");
  const head = (await store.loadSession(sid))?.headRevision ?? 0;
  await store.commit({
    ...commitDraft(sid, head, { usage: USAGE, advanceTurn: true }),
    completeQueueClaims: [queueClaimCompletion(claim)],
    releaseLease: fence,
    turnEnd: { turnId, outcome },
  });
}

export function describeTurnRecordLaws(factory: StoreFactory): void {
  describe("turn records", () => {
    const harness = useStoreHarness(factory);

    test("a turn reads in_progress from its idle claim, waiting while parked, in_progress once resumed, and failed with its usage and outcome from its commit", async () => {
      const { store } = harness();
      const read = reads(store);
      const sid = freshSessionId();
      const { input } = await store.submitInput(inputDraft(sid, "question"));
      const turnId = turnIdOfInput(sid, input.inputId);
      const first = fenceOf(await acquire(store, sid, opaqueOwner("first"), LONG_TTL_MS));
      expect(await read.one(sid, turnId)).toBeUndefined();
      await store.claimInputs(first, { kind: "idle" }, 1);
      const started = await read.one(sid, turnId);
      expect(started).toMatchObject({ turnId, status: "in_progress" });
      expect(started?.startedAtMs).toBeGreaterThan(0);
      expect(started?.createdAtMs).toBe(started?.startedAtMs);

      await store.parkTurn(first, {
        turnId,
        waitingOn: [{ kind: "result", callId: "c1" }],
        progress: "{}",
        inputIds: [input.inputId],
        batchIds: [],
        ttlMs: LONG_TTL_MS,
      });
      expect(await read.one(sid, turnId)).toEqual({ ...started, status: "waiting" });

      await store.answerToolCalls(sid, turnId, [{ callId: "c1", output: "x", isError: false }]);
      const second = fenceOf(await acquire(store, sid, opaqueOwner("second"), LONG_TTL_MS));
      const resumed = await store.resumeTurn(second, turnId);
      if (resumed?.status !== "answered" || !resumed.inputClaim) {
        throw new Error(`not resumed: ${resumed?.status}`);
      }
      expect(await read.one(sid, turnId)).toEqual({ ...started, status: "in_progress" });

      await store.commit({
        ...commitDraft(sid, 1, { usage: USAGE, advanceTurn: true, parkedTurnId: turnId }),
        completeInputClaims: [inputClaimCompletion(resumed.inputClaim)],
        turnEnd: { turnId, outcome: TOOL_ERROR },
      });
      const ended = await read.one(sid, turnId);
      expect(ended).toMatchObject({
        turnId,
        status: "failed",
        createdAtMs: started?.createdAtMs,
        startedAtMs: started?.startedAtMs,
        usage: USAGE,
        outcome: TOOL_ERROR,
      });
      expect(ended?.completedAtMs).toBeGreaterThanOrEqual(started?.startedAtMs ?? Infinity);
    });

    test("a commit ends a turn as completed or cancelled by its outcome; a turn of queued work only gets its record there", async () => {
      const { store } = harness();
      const read = reads(store);
      const sid = freshSessionId();
      await commitWorkTurn(store, sid, "turn-a", { kind: "finished", reason: "assistant_message" });
      await commitWorkTurn(store, sid, "turn-b", { kind: "stopped", reason: "cancelled" });
      const a = await read.one(sid, "turn-a");
      expect(a).toMatchObject({ status: "completed", usage: USAGE });
      expect(a?.completedAtMs).toBe(a?.startedAtMs);
      expect((await read.one(sid, "turn-b"))?.status).toBe("cancelled");
    });

    test("a turn start's step records the turn it claims, as an idle claim does", async () => {
      const { store } = harness();
      if (!store.startTurn) throw new Error("this backend has no one-step turn start");
      const read = reads(store);
      const sid = freshSessionId();
      const receipt = await store.startTurn(inputDraft(sid, "hello"), {
        owner: opaqueOwner("starter"),
        ttlMs: LONG_TTL_MS,
        maxInputs: 1,
      });
      expect(receipt.started?.inputs?.inputs).toHaveLength(1);
      const turnId = turnIdOfInput(sid, receipt.submitted.input.inputId);
      expect(await read.one(sid, turnId)).toMatchObject({ turnId, status: "in_progress" });
    });

    test("a steer claimed at a checkpoint starts no turn of its own", async () => {
      const { store } = harness();
      const read = reads(store);
      const sid = freshSessionId();
      const { input } = await store.submitInput(inputDraft(sid, "first"));
      const running = turnIdOfInput(sid, input.inputId);
      const fence = fenceOf(await acquire(store, sid, opaqueOwner("runner"), LONG_TTL_MS));
      await store.claimInputs(fence, { kind: "idle" }, 1);
      const steer = await store.submitInput(
        inputDraft(sid, "more", {
          kind: "active_turn",
          turnId: running,
          minBoundary: "after_work",
        }),
      );
      const claimed = await store.claimInputs(
        fence,
        { kind: "checkpoint", turnId: running, checkpoint: "after_work" },
        4,
      );
      expect(claimed?.inputs.map((i) => i.inputId)).toEqual([steer.input.inputId]);
      const page = await read.page(sid, { order: "asc", limit: 10 });
      expect(page.turns.map((t) => t.turnId)).toEqual([running]);
    });

    test("pages run oldest first or newest first, after a turn exclusively; an unknown turn is invalid_argument", async () => {
      const { store } = harness();
      const read = reads(store);
      const sid = freshSessionId();
      for (const id of ["t1", "t2", "t3"]) {
        await commitWorkTurn(store, sid, id, { kind: "finished", reason: "assistant_message" });
      }
      const ids = (turns: TurnRecord[]) => turns.map((t) => t.turnId);
      const asc = await read.page(sid, { order: "asc", limit: 2 });
      expect([ids(asc.turns), asc.hasMore]).toEqual([["t1", "t2"], true]);
      const rest = await read.page(sid, { order: "asc", after: "t2", limit: 2 });
      expect([ids(rest.turns), rest.hasMore]).toEqual([["t3"], false]);
      const desc = await read.page(sid, { order: "desc", limit: 5 });
      expect([ids(desc.turns), desc.hasMore]).toEqual([["t3", "t2", "t1"], false]);
      const older = await read.page(sid, { order: "desc", after: "t3", limit: 1 });
      expect([ids(older.turns), older.hasMore]).toEqual([["t2"], true]);
      await expectTetherError(
        () => read.page(sid, { order: "asc", after: "t9", limit: 2 }),
        "invalid_argument",
      );
    });

    test("the records go with the session", async () => {
      const { store } = harness();
      const read = reads(store);
      const sid = freshSessionId();
      await commitWorkTurn(store, sid, "gone", { kind: "finished", reason: "assistant_message" });
      expect(await store.deleteSession(sid)).toBe(true);
      expect(await read.one(sid, "gone")).toBeUndefined();
      expect(await read.page(sid, { order: "asc", limit: 10 })).toEqual({
        turns: [],
        hasMore: false,
      });
    });

    test("a session keeps its newest thousand records: the oldest goes first", async () => {
      const { store } = harness();
      const read = reads(store);
      const sid = freshSessionId();
      const outcome: TurnOutcomeSummary = { kind: "finished", reason: "assistant_message" };
      await store.commit(commitDraft(sid, 0));
      for (let n = 1; n <= 1001; n++) {
        await store.commit({
          ...commitDraft(sid, n),
          turnEnd: { turnId: `t${n}`, outcome },
        });
      }
      expect(await read.one(sid, "t1")).toBeUndefined();
      expect((await read.one(sid, "t2"))?.status).toBe("completed");
      const oldest = await read.page(sid, { order: "asc", limit: 1 });
      expect(oldest.turns.map((t) => t.turnId)).toEqual(["t2"]);
      const newest = await read.page(sid, { order: "desc", limit: 1 });
      expect(newest.turns.map((t) => t.turnId)).toEqual(["t1001"]);
    });
  });
}
