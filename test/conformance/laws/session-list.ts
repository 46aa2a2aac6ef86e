// Listing sessions: every session that exists (created by a commit or by its first input) is
// listed once, in id order, in pages that resume from their cursor; a deleted one is not. A page's
// summaries come back in one read: counters, metadata, live lease and parked turn of each.
import { describe, expect, test } from "vitest";
import { parseSessionId, type SessionId } from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { acquire } from "../support/expectations.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
  waitingTurn,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";
import { randomUUID } from "node:crypto";

export function describeSessionListLaws(factory: StoreFactory): void {
  describe("session list", () => {
    const harness = useStoreHarness(factory);

    test("sessions are listed in id order, in pages, created by commit or by input; deleted ones are gone", async () => {
      const { store } = harness();
      const prefix = `list-${randomUUID().slice(0, 8)}-`;
      const [a, b, c] = ["a", "b", "c"].map((n) => parseSessionId(`${prefix}${n}`)) as [
        ReturnType<typeof parseSessionId>,
        ReturnType<typeof parseSessionId>,
        ReturnType<typeof parseSessionId>,
      ];
      await store.commit(commitDraft(c, 0));
      await store.submitInput(inputDraft(a, "first input creates it"));
      await store.commit(commitDraft(b, 0));

      const first = await store.listSessions({ prefix, limit: 2 });
      expect(first.sessionIds).toEqual([a, b]);
      expect(first.nextCursor).not.toBe("");
      const second = await store.listSessions({ prefix, cursor: first.nextCursor, limit: 2 });
      expect(second.sessionIds).toEqual([c]);
      expect(second.nextCursor).toBe("");

      expect(await store.deleteSession(b)).toBe(true);
      expect((await store.listSessions({ prefix, limit: 10 })).sessionIds).toEqual([a, c]);
    });

    test("summaries of a page: in the order asked, each with its counters, metadata, live lease and parked turn; the same counters loadSession reads; none for an unknown session", async () => {
      const { store } = harness();
      const [plain, leased, parked, byInput, unknown] = Array.from({ length: 5 }, () =>
        freshSessionId(),
      ) as [SessionId, SessionId, SessionId, SessionId, SessionId];
      await store.commit(commitDraft(plain, 0, { metadataPatch: { k: "v" } }));
      await store.commit(commitDraft(plain, 1));
      await store.commit(commitDraft(leased, 0));
      const lease = await acquire(store, leased, opaqueOwner("holder"), LONG_TTL_MS);
      await store.commit(commitDraft(parked, 0));
      const parker = await acquire(store, parked, opaqueOwner("parker"), LONG_TTL_MS);
      await store.parkTurn(fenceOf(parker), waitingTurn("turn-p"));
      await store.submitInput(inputDraft(byInput, "its first input creates it"));

      const read = await store.readSessionSummaries([parked, unknown, byInput, leased, plain]);
      expect(read.map((x) => x.sessionId)).toEqual([parked, byInput, leased, plain]);
      // Whatever a backend counts for a session its input created, the summary agrees with a load.
      const loaded = await store.loadSession(byInput);
      expect(read[1]).toMatchObject({
        headRevision: loaded?.headRevision,
        turnIndex: loaded?.turnIndex,
        metadata: loaded?.metadata,
      });
      const [p, , l, s] = read;
      expect(s).toMatchObject({
        headRevision: 2,
        turnIndex: 0,
        metadata: { k: "v" },
        lease: undefined,
        parkedTurn: undefined,
      });
      expect(s?.usage.inputTokens).toBe(0);
      expect(l?.lease).toMatchObject({
        leaseToken: lease.leaseToken,
        fencingToken: lease.fencingToken,
        owner: { ownerId: "owner-holder" },
      });
      expect(l?.parkedTurn).toBeUndefined();
      // Parking released the lease: the summary shows the turn, not a holder.
      expect(p?.lease).toBeUndefined();
      expect(p?.parkedTurn).toMatchObject({
        turnId: "turn-p",
        waitingOn: [{ kind: "result", callId: "c1" }],
      });

      expect(await store.readSessionSummaries([])).toEqual([]);
      await store.deleteSession(plain);
      expect((await store.readSessionSummaries([plain])).map((x) => x.sessionId)).toEqual([]);
    });
  });
}
