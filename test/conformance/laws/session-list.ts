// Listing sessions: every session that exists (created by a commit or by its first input) is
// listed once, in id order, in pages that resume from their cursor; a deleted one is not.
import { describe, expect, test } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import { commitDraft, inputDraft } from "../support/fixtures.js";
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
  });
}
