// The driver's one decision after a turn: each way a turn ends maps to one step of the hold, the
// next turn or how the hold ends (HoldEnd).
import { describe, expect, it } from "vitest";
import { TetherError } from "../../../../src/domain/errors.js";
import { afterTurn } from "../../../../src/runtime/session/after-turn.js";
import { PARK_RECHECK_MS } from "../../../../src/runtime/turn/index.js";

const expired = new TetherError("session_execution_lease_expired", "lease expired");
const away = new TetherError("store_unavailable", "store away");
const NOW = 1_000;

describe("afterTurn", () => {
  it("looks for the next turn after a committed finish", () => {
    const outcome = { kind: "finished", reason: "assistant_message", text: "hi" } as const;
    expect(afterTurn({ kind: "finished", turnId: "t", outcome, headRevision: 3 }, NOW)).toEqual({
      kind: "next_turn",
    });
  });

  it("looks for the next turn after a committed cancel", () => {
    expect(afterTurn({ kind: "cancelled", turnId: "t", headRevision: 4 }, NOW)).toEqual({
      kind: "next_turn",
    });
  });

  it("awaits a parked turn with its receipt's expiry and resumability", () => {
    const end = {
      kind: "parked",
      turnId: "t",
      receipt: { resumable: true, expiresAtMs: 9_000 },
    } as const;
    expect(afterTurn(end, NOW)).toEqual({
      kind: "end",
      end: { kind: "parked", wakeAtMs: undefined },
      leaveLease: false,
    });
  });

  it("wakes a parked turn that waits at its expiry or the recheck, whichever comes first", () => {
    const end = (expiresAtMs: number) =>
      ({ kind: "parked", turnId: "t", receipt: { resumable: false, expiresAtMs } }) as const;
    expect(afterTurn(end(9_000), NOW)).toMatchObject({ end: { kind: "parked", wakeAtMs: 9_000 } });
    expect(afterTurn(end(NOW + 2 * PARK_RECHECK_MS), NOW)).toMatchObject({
      end: { kind: "parked", wakeAtMs: NOW + PARK_RECHECK_MS },
    });
  });

  it("ends the hold as released when the commit let the lease go", () => {
    const end = { kind: "cancelled", turnId: "t", headRevision: 4, released: true } as const;
    expect(afterTurn(end, NOW)).toEqual({
      kind: "end",
      end: { kind: "released" },
      leaveLease: false,
    });
  });

  it("ends the hold and releases the lease when the turn was handed over", () => {
    expect(afterTurn({ kind: "handed_over", turnId: "t" }, NOW)).toEqual({
      kind: "end",
      end: { kind: "closing" },
      leaveLease: false,
    });
  });

  it("ends the hold as lost, releasing what it can, when the lease is gone", () => {
    expect(afterTurn({ kind: "lease_lost", turnId: "t", cause: expired }, NOW)).toEqual({
      kind: "end",
      end: { kind: "lost" },
      cause: expired,
      leaveLease: false,
    });
  });

  it("leaves the lease of an unannounced commit to expire, as lost when the lease went", () => {
    const end = { kind: "unannounced", turnId: "t", headRevision: 5, cause: expired } as const;
    expect(afterTurn(end, NOW)).toEqual({
      kind: "end",
      end: { kind: "lost" },
      cause: expired,
      leaveLease: true,
    });
  });

  it("leaves the lease of an unannounced commit to expire, as a failure when the store went", () => {
    const end = { kind: "unannounced", turnId: "t", headRevision: 5, cause: away } as const;
    expect(afterTurn(end, NOW)).toEqual({ kind: "fail", cause: away, leaveLease: true });
  });

  it("leaves the lease of a commit whose reply never came to expire, as a failure", () => {
    // A successor that finds the lease expired, not vacant, looks for the commit to announce.
    expect(afterTurn({ kind: "commit_unknown", turnId: "t", cause: away }, NOW)).toEqual({
      kind: "fail",
      cause: away,
      leaveLease: true,
    });
  });

  it("fails the loop, releasing the lease, when the turn stopped on a store failure", () => {
    expect(afterTurn({ kind: "failed", turnId: "t", cause: away }, NOW)).toEqual({
      kind: "fail",
      cause: away,
      leaveLease: false,
    });
  });
});
