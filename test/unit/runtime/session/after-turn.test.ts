// The driver's one decision after a turn: each way a turn ends maps to one step of the hold.
import { describe, expect, it } from "vitest";
import { TetherError } from "../../../../src/domain/errors.js";
import { afterTurn } from "../../../../src/runtime/session/after-turn.js";

const expired = new TetherError("session_execution_lease_expired", "lease expired");
const away = new TetherError("store_unavailable", "store away");

describe("afterTurn", () => {
  it("looks for the next turn after a committed finish", () => {
    const outcome = { kind: "finished", reason: "assistant_message", text: "hi" } as const;
    expect(afterTurn({ kind: "finished", turnId: "t", outcome, headRevision: 3 })).toEqual({
      kind: "next_turn",
    });
  });

  it("looks for the next turn after a committed cancel", () => {
    expect(afterTurn({ kind: "cancelled", turnId: "t", headRevision: 4 })).toEqual({
      kind: "next_turn",
    });
  });

  it("awaits a parked turn with its receipt's expiry and resumability", () => {
    const end = {
      kind: "parked",
      turnId: "t",
      receipt: { resumable: true, expiresAtMs: 9_000 },
    } as const;
    expect(afterTurn(end)).toEqual({ kind: "await_parked", expiresAtMs: 9_000, resumable: true });
  });

  it("ends the hold and releases the lease when the turn was handed over", () => {
    expect(afterTurn({ kind: "handed_over", turnId: "t" })).toEqual({ kind: "hand_over" });
  });

  it("ends the hold as lost, releasing what it can, when the lease is gone", () => {
    expect(afterTurn({ kind: "lease_lost", turnId: "t", cause: expired })).toEqual({
      kind: "lost",
      cause: expired,
      leaveLease: false,
    });
  });

  it("leaves the lease of an unannounced commit to expire, as lost when the lease went", () => {
    const end = { kind: "unannounced", turnId: "t", headRevision: 5, cause: expired } as const;
    expect(afterTurn(end)).toEqual({ kind: "lost", cause: expired, leaveLease: true });
  });

  it("leaves the lease of an unannounced commit to expire, as a failure when the store went", () => {
    const end = { kind: "unannounced", turnId: "t", headRevision: 5, cause: away } as const;
    expect(afterTurn(end)).toEqual({ kind: "fail", cause: away, leaveLease: true });
  });

  it("leaves the lease of a commit whose reply never came to expire, as a failure", () => {
    // A successor that finds the lease expired, not vacant, looks for the commit to announce.
    expect(afterTurn({ kind: "commit_unknown", turnId: "t", cause: away })).toEqual({
      kind: "fail",
      cause: away,
      leaveLease: true,
    });
  });

  it("fails the loop, releasing the lease, when the turn stopped on a store failure", () => {
    expect(afterTurn({ kind: "failed", turnId: "t", cause: away })).toEqual({
      kind: "fail",
      cause: away,
      leaveLease: false,
    });
  });
});
