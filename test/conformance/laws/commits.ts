// Laws 1-3: the head CAS authorizes a commit and advances the head by one; a lease in a commit is
// advisory; stamps answer replays with the original receipt.
import { describe, expect, test } from "vitest";
import {
  parseClaimId,
  parseSessionId,
  parseBatchId,
  parseInputId,
} from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { usage } from "../../../src/domain/usage.js";
import { acquire, expectSameLease, expectTetherError } from "../support/expectations.js";
import { commitDraft, freshSessionId, LONG_TTL_MS, opaqueOwner } from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeCommitLaws(factory: StoreFactory): void {
  describe("commits", () => {
    const harness = useStoreHarness(factory);

    test("law 1: the first commit from head 0 creates the session at head 1", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      expect(await store.loadSession(sid)).toBeUndefined();
      const receipt = await store.commit(commitDraft(sid, 0, { appendMessages: ["hello"] }));
      expect(receipt).toEqual({ sessionId: sid, headRevision: 1, replayed: false });
      const snapshot = await store.loadSession(sid);
      expect(snapshot?.headRevision).toBe(1);
      expect(snapshot?.messages).toEqual(["hello"]);
    });

    test("law 1: every commit advances the head by exactly one", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const heads: number[] = [];
      for (let expected = 0; expected < 4; expected++) {
        const receipt = await store.commit(
          commitDraft(sid, expected, { appendMessages: [`m${expected}`] }),
        );
        heads.push(receipt.headRevision);
      }
      expect(heads).toEqual([1, 2, 3, 4]);
      expect((await store.loadSession(sid))?.headRevision).toBe(4);
    });

    test("law 1: a stale or future expected head is head_revision_conflict and changes nothing", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["one"] }));
      await store.commit(commitDraft(sid, 1, { appendMessages: ["two"] }));
      await expectTetherError(
        () => store.commit(commitDraft(sid, 1, { appendMessages: ["stale"] })),
        "head_revision_conflict",
      );
      await expectTetherError(
        () => store.commit(commitDraft(sid, 7, { appendMessages: ["future"] })),
        "head_revision_conflict",
      );
      await expectTetherError(
        () => store.commit(commitDraft(freshSessionId(), 3, { appendMessages: ["no such head"] })),
        "head_revision_conflict",
      );
      const snapshot = await store.loadSession(sid);
      expect(snapshot?.headRevision).toBe(2);
      expect(snapshot?.messages).toEqual(["one", "two"]);
    });

    test("law 1: of concurrent commits from the same base exactly one applies", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["base"] }));
      const writers = ["w0", "w1", "w2", "w3", "w4"];
      const results = await Promise.allSettled(
        writers.map((w) => store.commit(commitDraft(sid, 1, { appendMessages: [w] }))),
      );
      const applied = results.filter((r) => r.status === "fulfilled");
      const refused = results.filter((r) => r.status === "rejected");
      expect(applied).toHaveLength(1);
      expect(refused).toHaveLength(4);
      for (const r of refused) {
        expect((r.reason as { code?: string }).code).toBe("head_revision_conflict");
      }
      expect(applied[0]?.value.headRevision).toBe(2);
      const winner = writers[results.findIndex((r) => r.status === "fulfilled")];
      const snapshot = await store.loadSession(sid);
      expect(snapshot?.headRevision).toBe(2);
      expect(snapshot?.messages).toEqual(["base", winner]);
    });

    test("law 2: a plain commit needs no lease: the head CAS authorizes it", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("holder"), LONG_TTL_MS);
      const receipt = await store.commit(commitDraft(sid, 0, { appendMessages: ["no lease"] }));
      expect(receipt.headRevision).toBe(1);
      expectSameLease((await store.currentLease(sid))!, held);
    });

    test("law 2: the lease named in a commit is released when the commit applies", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      await store.commit(
        commitDraft(sid, 0, { appendMessages: ["done"], releaseLease: fenceOf(held) }),
      );
      expect(await store.currentLease(sid)).toBeUndefined();
      const next = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    });

    test("law 2: a stale lease named in a commit is advisory and never clears the newer lease", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const old = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      await store.releaseLease(fenceOf(old));
      const newer = await acquire(store, sid, opaqueOwner("b"), LONG_TTL_MS);
      const receipt = await store.commit(
        commitDraft(sid, 0, { appendMessages: ["late"], releaseLease: fenceOf(old) }),
      );
      expect(receipt.headRevision).toBe(1);
      expectSameLease((await store.currentLease(sid))!, newer);
    });

    test("law 2: a refused commit does not release the lease it names", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(commitDraft(sid, 0, { appendMessages: ["one"] }));
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 0, { appendMessages: ["stale"], releaseLease: fenceOf(held) }),
          ),
        "head_revision_conflict",
      );
      expectSameLease((await store.currentLease(sid))!, held);
    });

    test("law 2: a commit whose lease fence names another session is session_mismatch", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const other = freshSessionId();
      const elsewhere = await acquire(store, other, opaqueOwner("a"), LONG_TTL_MS);
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 0, { appendMessages: ["x"], releaseLease: fenceOf(elsewhere) }),
          ),
        "session_mismatch",
      );
      expect(await store.loadSession(sid)).toBeUndefined();
      expectSameLease((await store.currentLease(other))!, elsewhere);
    });

    test("law 2: a commit whose claim completion names another session is session_mismatch", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const other = parseSessionId(`${sid}-other`);
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 0, {
              completeQueueClaims: [
                {
                  claimId: parseClaimId("claim-elsewhere"),
                  sessionId: other,
                  fencingToken: 1,
                  batchIds: [parseBatchId("batch-elsewhere")],
                },
              ],
            }),
          ),
        "session_mismatch",
      );
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 0, {
              completeInputClaims: [
                {
                  claimId: parseClaimId("claim-elsewhere"),
                  sessionId: other,
                  fencingToken: 1,
                  inputIds: [parseInputId("input-elsewhere")],
                },
              ],
            }),
          ),
        "session_mismatch",
      );
      expect(await store.loadSession(sid)).toBeUndefined();
    });

    test("law 2: messages, usage, turn index and metadata land in the snapshot", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(
        commitDraft(sid, 0, {
          appendMessages: ['{"role":"user"}', '{"role":"assistant"}'],
          usage: usage({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 3 }),
          advanceTurn: true,
          metadataPatch: { title: "first", keep: "yes" },
        }),
      );
      await store.commit(
        commitDraft(sid, 1, {
          appendMessages: ['{"role":"tool"}'],
          usage: usage({ inputTokens: 1, cacheWriteTokens: 4, reasoningTokens: 2 }),
          metadataPatch: { title: "", label: "second" },
        }),
      );
      await store.commit(commitDraft(sid, 2, { advanceTurn: true }));
      const snapshot = await store.loadSession(sid);
      expect(snapshot).toEqual({
        sessionId: sid,
        headRevision: 3,
        turnIndex: 2,
        messages: ['{"role":"user"}', '{"role":"assistant"}', '{"role":"tool"}'],
        messagesFrom: 0,
        transcriptEpoch: expect.stringMatching(/.+/u),
        usage: {
          inputTokens: 11,
          outputTokens: 5,
          cacheReadTokens: 3,
          cacheWriteTokens: 4,
          reasoningTokens: 2,
        },
        metadata: { keep: "yes", label: "second" },
      });
    });

    test("law 3: a replayed stamp returns the original receipt after the lease is gone and the head moved", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const held = await acquire(store, sid, opaqueOwner("a"), LONG_TTL_MS);
      const turnCommit = commitDraft(sid, 0, {
        appendMessages: ["turn-1"],
        advanceTurn: true,
        stamp: { operationId: "op-1", contentHash: "hash-1" },
        releaseLease: fenceOf(held),
      });
      expect(await store.commit(turnCommit)).toEqual({
        sessionId: sid,
        headRevision: 1,
        replayed: false,
      });
      await store.commit(commitDraft(sid, 1, { appendMessages: ["later"] }));
      expect(await store.currentLease(sid)).toBeUndefined();
      expect(await store.commit(turnCommit)).toEqual({
        sessionId: sid,
        headRevision: 1,
        replayed: true,
      });
      const snapshot = await store.loadSession(sid);
      expect(snapshot?.headRevision).toBe(2);
      expect(snapshot?.turnIndex).toBe(1);
      expect(snapshot?.messages).toEqual(["turn-1", "later"]);
    });

    test("law 3: the same stamp with another hash is commit_stamp_conflict and changes nothing", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      await store.commit(
        commitDraft(sid, 0, {
          appendMessages: ["turn-1"],
          stamp: { operationId: "op-1", contentHash: "hash-1" },
        }),
      );
      await expectTetherError(
        () =>
          store.commit(
            commitDraft(sid, 1, {
              appendMessages: ["other content"],
              stamp: { operationId: "op-1", contentHash: "hash-2" },
            }),
          ),
        "commit_stamp_conflict",
      );
      const snapshot = await store.loadSession(sid);
      expect(snapshot?.headRevision).toBe(1);
      expect(snapshot?.messages).toEqual(["turn-1"]);
    });

    test("law 3: distinct stamps each apply once", async () => {
      const { store } = harness();
      const sid = freshSessionId();
      const first = commitDraft(sid, 0, {
        appendMessages: ["a"],
        stamp: { operationId: "op-a", contentHash: "h" },
      });
      const second = commitDraft(sid, 1, {
        appendMessages: ["b"],
        stamp: { operationId: "op-b", contentHash: "h" },
      });
      expect((await store.commit(first)).headRevision).toBe(1);
      expect((await store.commit(second)).headRevision).toBe(2);
      expect(await store.commit(first)).toMatchObject({ headRevision: 1, replayed: true });
      expect(await store.commit(second)).toMatchObject({ headRevision: 2, replayed: true });
      expect((await store.loadSession(sid))?.messages).toEqual(["a", "b"]);
    });
  });
}
