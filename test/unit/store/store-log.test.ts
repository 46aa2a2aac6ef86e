// The stores' decision records: one per lease claim, reclaim, renewal refusal and fencing
// refusal, with inputs and outcome, and never a lease token.
import { describe, expect, it } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import { fenceOf, type LeaseOwner, type SessionExecutionLease } from "../../../src/domain/lease.js";
import { queueClaimCompletion } from "../../../src/domain/queue.js";
import { createManualClock } from "../../../src/ports/clock.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import type { StoreLogger } from "../../../src/store/shared/store-log.js";

interface LogRecord {
  level: "debug" | "info" | "warn";
  fields: Record<string, unknown>;
  message: string;
}

function recorder(): { logger: StoreLogger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at =
    (level: LogRecord["level"]) =>
    (fields: object, message: string): void => {
      records.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { logger: { debug: at("debug"), info: at("info"), warn: at("warn") }, records };
}

const owner = (id: string): LeaseOwner => ({
  ownerId: id,
  incarnationId: `${id}:1`,
  liveness: { kind: "opaque" },
});

function acquired(outcome: { kind: string; lease?: SessionExecutionLease }): SessionExecutionLease {
  if (outcome.kind !== "acquired" || !outcome.lease) throw new Error("not acquired");
  return outcome.lease;
}

describe("store decision records", () => {
  it("records claims, refusals and supersessions with inputs and outcome", async () => {
    const clock = createManualClock();
    const { logger, records } = recorder();
    const store = createMemoryStore({ clock, logger });
    const s = parseSessionId("logged");

    const lease = acquired(await store.tryClaimLease(s, owner("a"), 1_000));
    await store.tryClaimLease(s, owner("b"), 1_000);
    await store.enqueueWork({
      sessionId: s,
      workClass: "turn_work",
      deliveryPolicy: "earliest_safe_boundary",
      slotPolicy: "exclusive",
      payload: "p",
    });
    const claim = await store.claimReadyWork(fenceOf(lease), "idle", 1);
    if (!claim) throw new Error("nothing claimed");
    clock.advance(2_000);
    await expect(store.renewLease(fenceOf(lease), 1_000)).rejects.toThrow();
    await expect(store.claimReadyWork(fenceOf(lease), "idle", 1)).rejects.toThrow();
    const next = acquired(await store.reclaimLease(s, owner("b"), fenceOf(lease), 1_000));
    await expect(
      store.commit({
        sessionId: s,
        expectedHeadRevision: 1,
        appendMessages: [],
        completeQueueClaims: [queueClaimCompletion(claim)],
      }),
    ).rejects.toThrow();

    expect(records.map((r) => [r.level, r.message, r.fields.outcome])).toEqual([
      ["debug", "lease claimed", "acquired"],
      ["info", "lease claim refused", "busy"],
      ["warn", "lease renewal refused", "lease_expired"],
      ["warn", "fenced operation refused", "lease_expired"],
      ["info", "lease reclaimed", "acquired"],
      ["warn", "commit refused: claim superseded", "superseded"],
    ]);
    expect(records[1]?.fields).toMatchObject({
      sessionId: s,
      ownerId: "b",
      ttlMs: 1_000,
      holderOwnerId: "a",
      holderFencingToken: lease.fencingToken,
    });
    // The manual clock starts at 1_700_000_000_000 ms, and a first token is the clock (ADR 0022).
    expect(records[3]?.fields).toMatchObject({
      operation: "claimReadyWork",
      fencingToken: 1_700_000_000_000,
    });
    expect(records[4]?.fields).toMatchObject({
      observedFencingToken: lease.fencingToken,
      fencingToken: next.fencingToken,
    });
    expect(records[5]?.fields).toMatchObject({ claimId: claim.claimId, claim: "queued_work" });
    expect(JSON.stringify(records)).not.toContain(lease.leaseToken);
  });
});
