// The outbox hints' fold (ADR 0021 "Folded into the commit"): what a commit carries, and what
// happens after it: the claim handed to this replica's deliverer, the note without a ticket, and
// nothing after a replay (the applied commit's hint and lease stand).
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import type { FoldedOutboxClaim } from "../../../src/domain/session.js";
import { createManualClock } from "../../../src/ports/clock.js";
import { createOutboxHints } from "../../../src/runtime/index.js";

const SID = "acme:s-1" as SessionId;
const TICKET = { claimToken: "deliverer-1", leaseMs: 60_000, max: 16 };
const CLAIMED: FoldedOutboxClaim = { report: { claims: [], remaining: 0 }, endpointsVersion: 3 };

function setup(ticket: typeof TICKET | undefined) {
  const clock = createManualClock(1_000);
  const calls: string[] = [];
  const store = {
    noteOutbox: (id: string, at: number) => {
      calls.push(`note ${id} ${at}`);
      return Promise.resolve();
    },
    expectOutbox: () => Promise.reject(new Error("a folded commit expects in its step")),
  };
  const local = {
    claimTicket: () => ticket,
    deliverClaimed: (id: string, claimed: FoldedOutboxClaim, seenAtMs: number) => {
      calls.push(`deliver ${id} v${claimed.endpointsVersion} ${seenAtMs}`);
    },
  };
  const hints = createOutboxHints(store, clock, 500, undefined, local);
  return { hints, calls };
}

describe("outbox hints folded into the commit", () => {
  it("a fold carries the expect a lease ahead and this replica's ticket; its claim goes to the deliverer", async () => {
    const { hints, calls } = setup(TICKET);
    const fold = hints.fold?.(SID);
    expect(fold).toEqual({ nowMs: 1_000, dueAtMs: 1_500, claim: TICKET });
    await hints.folded?.(SID, fold ?? { nowMs: 0, dueAtMs: 0 }, CLAIMED);
    expect(calls).toEqual([`deliver ${SID} v3 1000`]);
  });

  it("without a ticket (no running deliverer) the fold only expects, and the note follows", async () => {
    const { hints, calls } = setup(undefined);
    const fold = hints.fold?.(SID);
    expect(fold).toEqual({ nowMs: 1_000, dueAtMs: 1_500 });
    await hints.folded?.(SID, fold ?? { nowMs: 0, dueAtMs: 0 });
    expect(calls).toEqual([`note ${SID} 1000`]);
  });

  it("a replay (a ticket given, no claim back) sends nothing: the applied commit's hint stands", async () => {
    const { hints, calls } = setup(TICKET);
    const fold = hints.fold?.(SID);
    await hints.folded?.(SID, fold ?? { nowMs: 0, dueAtMs: 0 });
    expect(calls).toEqual([]);
  });
});
