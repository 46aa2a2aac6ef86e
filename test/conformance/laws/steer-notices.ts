// A new steer tells its turn in its submit's step (ADR 0041): the store calls the attached steer
// notice once per new active_turn input, naming the session and the turn; a next-turn input and
// a submit answered from its source key (nothing new stored) tell nothing. The running turn's
// before-completion checkpoint skips its claim only while it heard no such notice. Memory, Redis,
// Cluster and replicated; the wire has no notice to attach (its submit is a call like any other).
import { describe, expect, test } from "vitest";
import { activeTurn, freshSessionId, inputDraft } from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

export function describeSteerNoticeLaws(factory: StoreFactory): void {
  describe("steer notices (ADR 0041)", () => {
    const harness = useStoreHarness(factory);

    test("a new steer's submit tells the notice once, naming its turn; other submits tell nothing", async () => {
      const { store, attachSteerNotices } = harness();
      if (!attachSteerNotices) throw new Error("this backend's harness attaches no steer notice");
      const told: [string, string][] = [];
      attachSteerNotices((sessionId, turnId) => told.push([sessionId, turnId]));
      const sid = freshSessionId();
      await store.submitInput(inputDraft(sid, "next"));
      expect(told).toEqual([]);
      const steer = inputDraft(sid, "steer", activeTurn("turn-a", "after_work"), "steer-key");
      const stored = await store.submitInput(steer);
      expect(stored.deduplicated).toBe(false);
      // Told by the time the submitter is answered.
      expect(told).toEqual([[sid, "turn-a"]]);
      const again = await store.submitInput(steer);
      expect(again.deduplicated).toBe(true);
      expect(told).toEqual([[sid, "turn-a"]]);
      await store.submitInput(inputDraft(sid, "late", activeTurn("turn-b", "before_completion")));
      expect(told).toEqual([
        [sid, "turn-a"],
        [sid, "turn-b"],
      ]);
    });
  });
}
