// Client tool call records and answers: every status domain → proto → bytes → proto → domain,
// the wire values as literals, and an UNSPECIFIED status refused naming the field.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  toolAnswerFromProto,
  toolAnswerToProto,
  toolCallStateFromProto,
  toolCallStateToProto,
} from "../../../../src/api/convert/tool-calls.js";
import type { ClientToolResult, ToolCallState } from "../../../../src/domain/tool-calls.js";
import {
  ToolCallAnswerSchema,
  ToolCallStateSchema,
  ToolCallStatus,
} from "../../../../src/gen/tether/v1/lease_service_pb.js";
import { expectRefusal, overTheWire } from "./support.js";

describe("ToolCallState", () => {
  test.each([
    [{ callId: "call-1", status: "pending" }, ToolCallStatus.PENDING],
    [
      {
        callId: "call-2",
        status: "answered",
        answer: { callId: "call-2", output: '{"temp":21}', isError: false },
      },
      ToolCallStatus.ANSWERED,
    ],
    [
      {
        callId: "call-3",
        status: "answered",
        answer: { callId: "call-3", output: "denied: not today", isError: true },
      },
      ToolCallStatus.ANSWERED,
    ],
    [{ callId: "call-4", status: "closed" }, ToolCallStatus.CLOSED],
  ] satisfies [ToolCallState, ToolCallStatus][])("%o travels as status %i", (state, status) => {
    const wire = overTheWire(ToolCallStateSchema, toolCallStateToProto(state));
    expect(wire.status).toBe(status);
    expect(toolCallStateFromProto(wire, "states[0]")).toEqual(state);
  });

  test("an answered record carries its output and error flag; the others carry none", () => {
    const answered = toolCallStateToProto({
      callId: "c",
      status: "answered",
      answer: { callId: "c", output: "out", isError: true },
    });
    expect(answered).toMatchObject({ callId: "c", output: "out", isError: true });
    expect(toolCallStateToProto({ callId: "c", status: "pending" })).toMatchObject({
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
    expect(toolAnswerFromProto(wire)).toEqual(answer);
  });
});
