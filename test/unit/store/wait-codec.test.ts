// The stores' encoding of typed waits: the stored form of records written before waits had kinds
// (a result by its call id, an approval as `approve:<call id>`, a decision as that field's answer)
// must decode to the same waits, and every wait must encode to a field no other wait has.
import { describe, expect, test } from "vitest";
import type { ToolWait } from "../../../src/domain/tool-calls.js";
import {
  decisionOf,
  decisionRecord,
  stateOf,
  waitField,
  waitOf,
} from "../../../src/store/shared/wait-codec.js";

describe("waitField and waitOf", () => {
  test.each([
    [{ kind: "result", callId: "c1" }, "c1"],
    [{ kind: "approval", callId: "c1" }, "approve:c1"],
    [{ kind: "result", callId: "call_0_1" }, "call_0_1"],
    [{ kind: "result", callId: "approve:c1" }, "{r}approve:c1"],
    [{ kind: "approval", callId: "approve:c1" }, "approve:approve:c1"],
    [{ kind: "result", callId: "approve" }, "approve"],
  ] satisfies [ToolWait, string][])("%o is stored as %s and reads back", (wait, field) => {
    expect(waitField(wait)).toBe(field);
    expect(waitOf(field)).toEqual(wait);
  });

  test("fields stored before waits had kinds read back as the same waits", () => {
    expect(waitOf("approve:c1")).toEqual({ kind: "approval", callId: "c1" });
    expect(waitOf("transfer-1")).toEqual({ kind: "result", callId: "transfer-1" });
  });
});

describe("decisions as stored answers", () => {
  test("denied is an error answer carrying the reason; approved is not", () => {
    expect(decisionRecord({ callId: "c1", approve: false, reason: "too risky" })).toEqual({
      output: "too risky",
      isError: true,
    });
    expect(decisionRecord({ callId: "c1", approve: true, reason: "" })).toEqual({
      output: "",
      isError: false,
    });
    expect(decisionOf("c1", { output: "fine", isError: false })).toEqual({
      callId: "c1",
      approve: true,
      reason: "fine",
    });
  });

  test("an approval answered before the upgrade reads back as a decision", () => {
    expect(stateOf("approve:c1", "answered", { output: "changed my mind", isError: true })).toEqual(
      {
        kind: "approval",
        callId: "c1",
        status: "decided",
        decision: { callId: "c1", approve: false, reason: "changed my mind" },
      },
    );
  });

  test("a result's answer, and a pending or closed record, read back with their kinds", () => {
    expect(stateOf("c1", "answered", { output: "42", isError: false })).toEqual({
      kind: "result",
      callId: "c1",
      status: "answered",
      answer: { callId: "c1", output: "42", isError: false },
    });
    expect(stateOf("approve:c2", "pending")).toEqual({
      kind: "approval",
      callId: "c2",
      status: "pending",
    });
    expect(stateOf("c3", "closed")).toEqual({ kind: "result", callId: "c3", status: "closed" });
  });
});
