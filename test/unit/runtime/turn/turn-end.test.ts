// How a turn's end is named: a committed outcome, or the error that stopped it short.
import { describe, expect, it } from "vitest";
import { TetherError } from "../../../../src/domain/errors.js";
import { committedEnd, endOfError } from "../../../../src/runtime/turn/turn-end.js";

describe("committedEnd", () => {
  it("names a committed cancel cancelled", () => {
    expect(committedEnd("t", { kind: "stopped", reason: "cancelled" }, 7)).toEqual({
      kind: "cancelled",
      turnId: "t",
      headRevision: 7,
    });
  });

  it("names every other committed outcome finished, with the outcome", () => {
    const outcome = { kind: "failed", reason: "internal", message: "boom" } as const;
    expect(committedEnd("t", outcome, 2)).toEqual({
      kind: "finished",
      turnId: "t",
      outcome: { kind: "failed", reason: "internal", message: "boom" },
      headRevision: 2,
    });
    const expired = { kind: "stopped", reason: "park_expired" } as const;
    expect(committedEnd("t", expired, 3).kind).toBe("finished");
  });
});

describe("endOfError", () => {
  it.each([
    "session_execution_lease_expired",
    "queued_work_claim_superseded",
    "turn_input_claim_superseded",
  ] as const)("names %s a lost lease", (code) => {
    const error = new TetherError(code, "refused");
    expect(endOfError("t", error)).toEqual({ kind: "lease_lost", turnId: "t", cause: error });
  });

  it("names another store error a failure", () => {
    const error = new TetherError("store_unavailable", "away");
    expect(endOfError("t", error)).toEqual({ kind: "failed", turnId: "t", cause: error });
  });

  it("throws a defect on", () => {
    expect(() => endOfError("t", new TypeError("x is undefined"))).toThrow("x is undefined");
  });
});
