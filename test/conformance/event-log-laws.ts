// Law 12 for the event log (src/ports/event-log.ts): an append that names a fence happens only
// while that fence names the session's live lease, so a stale writer's events never become
// visible. Written once against a log paired with the store whose leases it checks, and run per
// event-log backend (event-log.test.ts); the event log has no wire service.
import { describe, expect, test } from "vitest";
import type { SessionId } from "../../src/domain/ids.js";
import { fenceOf } from "../../src/domain/lease.js";
import type { SessionEvent } from "../../src/domain/session-events.js";
import type { EventLog } from "../../src/ports/event-log.js";
import { STALE_FENCE_KINDS } from "./laws/fences.js";
import { acquire, expectTetherError } from "./support/expectations.js";
import { freshSessionId, LONG_TTL_MS, opaqueOwner } from "./support/fixtures.js";
import { useStoreHarness, type StoreHarness } from "./support/store-factory.js";

/** A store and an event log over the same leases. */
export interface EventLogHarness extends StoreHarness {
  log: EventLog;
}

export type EventLogFactory = () => Promise<EventLogHarness>;

const delta = (text: string): { turnId: string; event: SessionEvent } => ({
  turnId: "turn-1",
  event: { type: "text_delta", text },
});

async function texts(log: EventLog, sid: SessionId): Promise<string[]> {
  const read = await log.read(sid, 0, 100);
  return read.entries.map((e) => (e.event.type === "text_delta" ? e.event.text : e.event.type));
}

export function describeEventLogFenceLaws(factory: EventLogFactory): void {
  describe("fenced appends (law 12 for the event log)", () => {
    const harness = useStoreHarness(factory);

    test("the live fence appends, numbered after what the log holds", async () => {
      const { store, log } = harness();
      const sid = freshSessionId();
      expect(await log.append(sid, [delta("unfenced")])).toEqual([1]);
      const held = fenceOf(await acquire(store, sid, opaqueOwner("writer"), LONG_TTL_MS));
      expect(await log.append(sid, [delta("a"), delta("b")], held)).toEqual([2, 3]);
      expect(await texts(log, sid)).toEqual(["unfenced", "a", "b"]);
    });

    for (const kind of STALE_FENCE_KINDS) {
      test(`a writer whose fence is ${kind.name} appends nothing`, async () => {
        const h = harness();
        const sid = freshSessionId();
        const held = fenceOf(await acquire(h.store, sid, opaqueOwner("writer"), LONG_TTL_MS));
        await h.log.append(sid, [delta("live")], held);
        await kind.settle?.(h, [held]);
        const stale = await kind.make(h, held);
        await expectTetherError(
          () => h.log.append(sid, [delta("stale"), delta("stale too")], stale),
          "session_execution_lease_expired",
        );
        expect(await h.log.lastSeq(sid)).toBe(1);
        expect(await texts(h.log, sid)).toEqual(["live"]);
      });
    }
  });
}
