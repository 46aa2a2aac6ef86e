// Tool-call records (typed waits) and answers: every status domain → proto → bytes → proto →
// domain, the wire values as literals (an approval is `approve:<call id>` on the wire, as it was
// before waits had kinds), and an UNSPECIFIED status refused naming the field.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  decisionToProto,
  toolAnswerFromProto,
  toolAnswerToProto,
  toolCallStateFromProto,
  toolCallStateToProto,
  waitFromWire,
  waitToWire,
} from "../../../../src/api/convert/tool-calls.js";
import type {
  ClientToolResult,
  ToolCallState,
  ToolWait,
} from "../../../../src/domain/tool-calls.js";
import {
  ToolCallAnswerSchema,
  ToolCallStateSchema,
  ToolCallStatus,
} from "../../../../src/gen/tether/v1/lease_service_pb.js";
import { expectRefusal, overTheWire } from "./support.js";

describe("ToolCallState", () => {
  test.each([
    [{ kind: "result", callId: "call-1", status: "pending" }, "call-1", ToolCallStatus.PENDING],
    [
      {
        kind: "result",
        callId: "call-2",
        status: "answered",
        answer: { callId: "call-2", output: '{"temp":21}', isError: false },
      },
      "call-2",
      ToolCallStatus.ANSWERED,
    ],
    [
      {
        kind: "approval",
        callId: "call-3",
        status: "decided",
        decision: { callId: "call-3", approve: false, reason: "not today" },
      },
      "approve:call-3",
      ToolCallStatus.ANSWERED,
    ],
    [{ kind: "result", callId: "call-4", status: "closed" }, "call-4", ToolCallStatus.CLOSED],
    [
      { kind: "approval", callId: "call-5", status: "pending" },
      "approve:call-5",
      ToolCallStatus.PENDING,
    ],
  ] satisfies [ToolCallState, string, ToolCallStatus][])(
    "%o travels as %s with status %i",
    (state, wireId, status) => {
      const wire = overTheWire(ToolCallStateSchema, toolCallStateToProto(state));
      expect(wire.callId).toBe(wireId);
      expect(wire.status).toBe(status);
      expect(toolCallStateFromProto(wire, "states[0]")).toEqual(state);
    },
  );

  test("a record carries its answer or decision as output and error flag; the others carry none", () => {
    const answered = toolCallStateToProto({
      kind: "result",
      callId: "c",
      status: "answered",
      answer: { callId: "c", output: "out", isError: true },
    });
    expect(answered).toMatchObject({ callId: "c", output: "out", isError: true });
    const approved = toolCallStateToProto({
      kind: "approval",
      callId: "c",
      status: "decided",
      decision: { callId: "c", approve: true, reason: "fine" },
    });
    expect(approved).toMatchObject({ callId: "approve:c", output: "fine", isError: false });
    expect(toolCallStateToProto({ kind: "result", callId: "c", status: "pending" })).toMatchObject({
      output: "",
      isError: false,
    });
  });

  test("an UNSPECIFIED or unknown status is refused naming the field's status", () => {
    const error = expectRefusal(
      () => toolCallStateFromProto(create(ToolCallStateSchema, { callId: "c" }), "states[2]"),
      "states[2].status",
    );
    expect(error.violations[0]?.description).toBe("must be pending, answered or closed");
    expectRefusal(
      () =>
        toolCallStateFromProto(
          create(ToolCallStateSchema, { callId: "c", status: 99 as ToolCallStatus }),
          "state",
        ),
      "state.status",
    );
  });
});

describe("ToolCallAnswer", () => {
  test.each([
    [{ callId: "call-1", output: "42", isError: false }],
    [{ callId: "call-2", output: "", isError: true }],
  ] satisfies [ClientToolResult][])("round-trips %o", (answer) => {
    const wire = overTheWire(ToolCallAnswerSchema, toolAnswerToProto(answer));
    expect(wire).toMatchObject(answer);
    expect(toolAnswerFromProto(wire)).toEqual({ kind: "result", answer });
  });

  test("a decision travels as the answer of its approval: denied is an error, the reason the output", () => {
    const wire = overTheWire(
      ToolCallAnswerSchema,
      decisionToProto({ callId: "call-1", approve: false, reason: "too risky" }),
    );
    expect(wire).toMatchObject({ callId: "approve:call-1", output: "too risky", isError: true });
    expect(toolAnswerFromProto(wire)).toEqual({
      kind: "approval",
      decision: { callId: "call-1", approve: false, reason: "too risky" },
    });
    const approved = create(ToolCallAnswerSchema, { callId: "approve:c2", output: "" });
    expect(toolAnswerFromProto(approved)).toEqual({
      kind: "approval",
      decision: { callId: "c2", approve: true, reason: "" },
    });
  });
});

describe("waits on the wire", () => {
  test.each([
    [{ kind: "result", callId: "c1" }, "c1"],
    [{ kind: "approval", callId: "c1" }, "approve:c1"],
    [{ kind: "result", callId: "approve:c1" }, "{r}approve:c1"],
    [{ kind: "approval", callId: "approve:c1" }, "approve:approve:c1"],
  ] satisfies [ToolWait, string][])("%o is %s and back", (wait, wire) => {
    expect(waitToWire(wait)).toBe(wire);
    expect(waitFromWire(wire)).toEqual(wait);
  });
});
