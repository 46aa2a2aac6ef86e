// The ready index kept in the store's own steps (ADR 0024). A store that says it keeps the index
// (`keepsReadyIndex`: a standalone Redis) marks a session ready in the step of its turn start,
// and clears the mark in the step of a release that finds nothing waiting (releaseIfIdle, or a
// commit whose announcement releases); a release refused because something waits keeps it. A
// store that does not (Cluster, memory) never touches the index: the runtime keeps it there.
// Needs the harness's `ready`, the index on the same backend and namespace as the store.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { inputClaimCompletion } from "../../../src/domain/inputs.js";
import { fenceOf, type LeaseFence } from "../../../src/domain/lease.js";
import type { ReadyIndex } from "../../../src/ports/ready-index.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import {
  commitDraft,
  freshSessionId,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const claim = { owner: opaqueOwner("a"), ttlMs: LONG_TTL_MS, maxInputs: 1 };

async function isMarked(ready: ReadyIndex, sid: SessionId): Promise<boolean> {
  return (await ready.listReady(1_000)).includes(sid);
}

/** A turn started in one step on a fresh session, and its claim completed by a commit. */
async function startAndCommit(store: RuntimeStore, sid: SessionId): Promise<LeaseFence> {
  const started = (await store.startTurn?.(inputDraft(sid, "one"), claim))?.started;
  if (!started?.inputs) throw new Error("the turn start claimed nothing");
  await store.commit(
    commitDraft(sid, 1, { completeInputClaims: [inputClaimCompletion(started.inputs)] }),
  );
  return fenceOf(started.lease);
}

/** `keeps`: whether this backend should keep the index in its steps (a standalone Redis). */
export function describeReadyIndexLaws(factory: StoreFactory, keeps: boolean): void {
  describe("the ready index kept in the store's steps (ADR 0024)", () => {
    const harness = useStoreHarness(factory);
    const parts = () => {
      const { store, ready } = harness();
      if (!ready) throw new Error("this harness has no ready index");
      expect(store.keepsReadyIndex ?? false).toBe(keeps);
      return { store, ready };
    };

    test("a turn start marks its session ready in its step, where the store keeps the index", async () => {
      const { store, ready } = parts();
      const sid = freshSessionId();
      const busy = freshSessionId();
      await store.startTurn?.(inputDraft(sid, "one"), claim);
      expect(await isMarked(ready, sid)).toBe(keeps);
      // A start that finds the session held marks it too: its input waits for a holder.
      await store.startTurn?.(inputDraft(busy, "one"), claim);
      await ready.markIdle(busy);
      await store.startTurn?.(inputDraft(busy, "two"), claim);
      expect(await isMarked(ready, busy)).toBe(keeps);
    });

    test("a release that finds nothing waiting clears the mark; one refused keeps it", async () => {
      const { store, ready } = parts();
      const sid = freshSessionId();
      const fence = await startAndCommit(store, sid);
      await ready.markReady(sid);
      // Input came meanwhile: the release is refused, and the mark stays for the sweep.
      await store.submitInput(inputDraft(sid, "two"));
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "pending" });
      expect(await isMarked(ready, sid)).toBe(true);
      const next = await store.claimInputs(fence, { kind: "idle" }, 1);
      await store.commit(
        commitDraft(sid, 2, { completeInputClaims: [inputClaimCompletion(next!)] }),
      );
      expect(await store.releaseIfIdle(fence)).toEqual({ kind: "released" });
      expect(await isMarked(ready, sid)).toBe(!keeps);
    });

    // Only where the store keeps the index: an announcement needs the log at hand, which it has.
    if (!keeps) return;
    test("a commit whose announcement releases the session clears its mark in the commit's step", async () => {
      const { store, ready } = parts();
      const sid = freshSessionId();
      const started = (await store.startTurn?.(inputDraft(sid, "one"), claim))?.started;
      const fence = fenceOf(started!.lease);
      const announce = (releaseIfIdle: boolean) => ({
        fence,
        turnId: "turn-a",
        eventJson: "{}",
        releaseIfIdle,
      });
      const kept = await store.commit(
        commitDraft(sid, 1, {
          completeInputClaims: [inputClaimCompletion(started!.inputs!)],
          announce: announce(false),
        }),
      );
      expect(kept.announced?.released).toBe(false);
      expect(await isMarked(ready, sid)).toBe(true);
      const released = await store.commit(commitDraft(sid, 2, { announce: announce(true) }));
      expect(released.announced?.released).toBe(true);
      expect(await isMarked(ready, sid)).toBe(false);
    });
  });
}
