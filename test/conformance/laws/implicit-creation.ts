// A session exists from its first acknowledged input (ADR 0003): storing an input or a batch for a
// session without a commit creates it in the same atomic step, exactly as CreateSession would
// (head revision 1, turn 0, nothing else), and never touches a session that already exists.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { expectTetherError } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  NEXT_TURN,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

/** What CreateSession leaves: the commit from head 0 with nothing in it. */
const NEW_SESSION = {
  headRevision: 1,
  turnIndex: 0,
  messages: [],
  messagesFrom: 0,
  transcriptEpoch: expect.stringMatching(/.+/u),
  metadata: {},
  usage: {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  },
};

type Deliver = (
  store: RuntimeStore,
  sid: SessionId,
  payload: string,
  key?: string,
) => Promise<unknown>;

const DELIVERIES: [string, Deliver][] = [
  [
    "submitInput",
    (store, sid, payload, key) => store.submitInput(inputDraft(sid, payload, NEXT_TURN, key)),
  ],
  [
    "enqueueWork",
    (store, sid, payload, key) =>
      store.enqueueWork(workDraft(sid, payload, key === undefined ? {} : { sourceKey: key })),
  ],
];

export function describeImplicitCreationLaws(factory: StoreFactory): void {
  describe("implicit session creation", () => {
    const harness = useStoreHarness(factory);

    for (const [name, deliver] of DELIVERIES) {
      test(`an acknowledged ${name} creates a session that has no commit, as CreateSession would`, async () => {
        const { store } = harness();
        const sid = freshSessionId();
        expect(await store.loadSession(sid)).toBeUndefined();
        await deliver(store, sid, "first");
        expect(await store.loadSession(sid)).toEqual({ sessionId: sid, ...NEW_SESSION });
        // The creation is the commit from head 0: an explicit create now loses that race.
        await expectTetherError(() => store.commit(commitDraft(sid, 0)), "head_revision_conflict");
        // The next commit builds on it.
        expect(
          (await store.commit(commitDraft(sid, 1, { appendMessages: ["m"] }))).headRevision,
        ).toBe(2);
      });

      test(`${name} never changes an existing session's head`, async () => {
        const { store } = harness();
        const sid = freshSessionId();
        await store.commit(commitDraft(sid, 0, { metadataPatch: { k: "v" } }));
        await store.commit(commitDraft(sid, 1, { appendMessages: ["m"], advanceTurn: true }));
        await deliver(store, sid, "later");
        expect(await store.loadSession(sid)).toMatchObject({
          headRevision: 2,
          turnIndex: 1,
          messages: ["m"],
          metadata: { k: "v" },
        });
      });

      test(`a replayed ${name} source key creates the session once`, async () => {
        const { store } = harness();
        const sid = freshSessionId();
        await deliver(store, sid, "once", "key-1");
        await deliver(store, sid, "once", "key-1");
        expect(await store.loadSession(sid)).toEqual({ sessionId: sid, ...NEW_SESSION });
      });
    }
  });
}
