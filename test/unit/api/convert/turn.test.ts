// StreamTurn's request fields read into the runtime's terms (proto → domain, the direction the
// server uses), and turn outcomes written to the wire (domain → proto → bytes → proto), with the
// edge values and the refusals naming the field.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  busyStrategyFromProto,
  clientToolsFromProto,
  inputFromProto,
  outcomeToProto,
  settingsFromProto,
} from "../../../../src/api/convert/turn.js";
import type { TurnOutcome } from "../../../../src/domain/turn-outcome.js";
import {
  BusyStrategy,
  FailureReason,
  FinishReason,
  InputPartSchema,
  StopReason,
  ToolDefinitionSchema,
  TurnEventSchema,
  TurnOptionsSchema,
  TurnOutcomeSchema,
} from "../../../../src/gen/tether/v1/turn_pb.js";
import { PASS_THROUGH_IDS } from "../../../../src/api/convert/scalars.js";
import { eventToProto } from "../../../../src/api/convert/session-events.js";
import type { CursoredEvent, SessionEvent } from "../../../../src/domain/session-events.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire } from "./support.js";

describe("busy strategy", () => {
  test("UNSPECIFIED means enqueue; every value maps to its name", () => {
    expect(busyStrategyFromProto(BusyStrategy.UNSPECIFIED)).toBe("enqueue");
    expect(busyStrategyFromProto(BusyStrategy.ENQUEUE)).toBe("enqueue");
    expect(busyStrategyFromProto(BusyStrategy.STEER)).toBe("steer");
    expect(busyStrategyFromProto(BusyStrategy.REJECT)).toBe("reject");
    expect(busyStrategyFromProto(BusyStrategy.INTERRUPT)).toBe("interrupt");
  });

  test("a number this server does not know is refused naming busy_strategy", () => {
    expectRefusal(() => busyStrategyFromProto(99 as BusyStrategy), "busy_strategy");
  });
});

describe("input parts", () => {
  const part = (init: Parameters<typeof create<typeof InputPartSchema>>[1]) =>
    overTheWire(InputPartSchema, create(InputPartSchema, init));

  test("text, inline image and image URL become input items", () => {
    const png = new Uint8Array([137, 80, 78, 71]);
    expect(
      inputFromProto([
        part({ kind: { case: "text", value: "" } }),
        part({
          kind: {
            case: "image",
            value: { mimeType: "image/png", source: { case: "data", value: png } },
          },
        }),
        part({
          kind: {
            case: "image",
            value: { source: { case: "url", value: "https://example.com/a.png" } },
          },
        }),
      ]),
    ).toEqual([
      { type: "text", text: "" },
      { type: "image", image: { kind: "inline", mediaType: "image/png", data: png } },
      { type: "image", image: { kind: "url", url: "https://example.com/a.png" } },
    ]);
  });

  test("no parts, an empty part, an image without source or of another type is refused naming the field", () => {
    expectRefusal(() => inputFromProto([]), "input");
    expectRefusal(
      () => inputFromProto([part({ kind: { case: "text", value: "a" } }), part({})]),
      "input[1]",
    );
    expectRefusal(
      () => inputFromProto([part({ kind: { case: "image", value: { mimeType: "image/png" } } })]),
      "input[0].image",
    );
    const inline = (mimeType: string, data: Uint8Array) =>
      part({ kind: { case: "image", value: { mimeType, source: { case: "data", value: data } } } });
    expectRefusal(
      () => inputFromProto([inline("image/tiff", new Uint8Array([1]))]),
      "input[0].image.mime_type",
    );
    expectRefusal(
      () => inputFromProto([inline("image/png", new Uint8Array())]),
      "input[0].image.data",
    );
    // Past the inline limit (5 MiB) at the edge, before anything is queued.
    expectRefusal(
      () => inputFromProto([inline("image/png", new Uint8Array(5 * 1024 * 1024 + 1))]),
      "input[0].image.data",
    );
  });
});

describe("client tools", () => {
  const tool = (init: Parameters<typeof create<typeof ToolDefinitionSchema>>[1]) =>
    overTheWire(ToolDefinitionSchema, create(ToolDefinitionSchema, init));

  test("no tools is no tools; an empty schema means any object", () => {
    expect(clientToolsFromProto([])).toEqual([]);
    expect(
      clientToolsFromProto([
        tool({ name: "a", description: "" }),
        tool({
          name: "B_1-".padEnd(64, "x"),
          description: "d",
          parametersJsonSchema: '{"type":"object","required":["q"]}',
        }),
      ]),
    ).toEqual([
      { name: "a", description: "", inputSchema: { type: "object" } },
      {
        name: "B_1-".padEnd(64, "x"),
        description: "d",
        inputSchema: { type: "object", required: ["q"] },
      },
    ]);
  });

  test("bad tools are refused naming the field", () => {
    expectRefusal(() => clientToolsFromProto([tool({ name: "" })]), "client_tools[0].name");
    expectRefusal(
      () => clientToolsFromProto([tool({ name: "x".repeat(65) })]),
      "client_tools[0].name",
    );
    expectRefusal(
      () => clientToolsFromProto([tool({ name: "a" }), tool({ name: "a" })]),
      "client_tools[1].name",
    );
    for (const schema of ["{", "[]", "null", "3"]) {
      expectRefusal(
        () => clientToolsFromProto([tool({ name: "a", parametersJsonSchema: schema })]),
        "client_tools[0].parameters_json_schema",
      );
    }
    const many = Array.from({ length: 129 }, (_, i) => tool({ name: `t${i}` }));
    expectRefusal(() => clientToolsFromProto(many), "client_tools");
    expect(clientToolsFromProto(many.slice(0, 128))).toHaveLength(128);
  });
});

describe("turn options", () => {
  const options = (init: Parameters<typeof create<typeof TurnOptionsSchema>>[1]) =>
    overTheWire(TurnOptionsSchema, create(TurnOptionsSchema, init));

  test("absent options and all-default options both mean no settings", () => {
    expect(settingsFromProto(undefined)).toEqual({});
    expect(settingsFromProto(options({}))).toEqual({});
  });

  test("every setting, at its edges, is read; temperature 0 is a setting (explicit presence)", () => {
    expect(
      settingsFromProto(
        options({
          model: "m",
          temperature: 0,
          maxOutputTokens: 4294967295,
          maxIterations: 100,
          tokenBudget: 9007199254740991n,
          systemPrompt: "be brief",
        }),
      ),
    ).toEqual({
      model: "m",
      temperature: 0,
      maxOutputTokens: 4294967295,
      maxIterations: 100,
      maxTurnTokens: MAX_SAFE,
      systemPrompt: "be brief",
    });
    expect(settingsFromProto(options({ temperature: 2 }))).toEqual({ temperature: 2 });
  });

  test("out-of-range settings are refused naming the field", () => {
    for (const temperature of [-0.5, 2.5, Number.NaN]) {
      expectRefusal(() => settingsFromProto(options({ temperature })), "options.temperature");
    }
    expectRefusal(
      () => settingsFromProto(options({ maxIterations: 101 })),
      "options.max_iterations",
    );
    expectRefusal(
      () => settingsFromProto(options({ tokenBudget: MAX_UINT64 })),
      "options.token_budget",
    );
  });
});

describe("turn outcomes", () => {
  const wire = (outcome: TurnOutcome) => overTheWire(TurnOutcomeSchema, outcomeToProto(outcome));

  test.each([
    [
      { kind: "finished", reason: "assistant_message", text: "" },
      { case: "finished", value: { reason: FinishReason.ASSISTANT_MESSAGE, value: "" } },
    ],
    [
      { kind: "finished", reason: "tool_value", toolName: "t", callId: "c", value: { n: 0 } },
      { case: "finished", value: { reason: FinishReason.TOOL_VALUE, value: '{"n":0}' } },
    ],
    [
      { kind: "finished", reason: "tool_value", toolName: "t", callId: "c", value: null },
      { case: "finished", value: { reason: FinishReason.TOOL_VALUE, value: "null" } },
    ],
    [
      {
        kind: "stopped",
        reason: "tool_error",
        toolName: "t",
        callId: "c",
        code: "E1",
        message: "m",
      },
      { case: "stopped", value: { reason: StopReason.TOOL_ERROR, message: "m", code: "E1" } },
    ],
    [
      { kind: "stopped", reason: "cancelled" },
      { case: "stopped", value: { reason: StopReason.CANCELLED, message: "cancelled", code: "" } },
    ],
    [
      {
        kind: "stopped",
        reason: "budget_exhausted",
        usedTokens: 9007199254740991,
        budgetTokens: 0,
      },
      {
        case: "stopped",
        value: {
          reason: StopReason.BUDGET_EXHAUSTED,
          message: "used 9007199254740991 of 0 tokens",
          code: "",
        },
      },
    ],
    [
      { kind: "stopped", reason: "max_iterations", iterations: 0 },
      {
        case: "stopped",
        value: {
          reason: StopReason.MAX_ITERATIONS,
          message: "stopped after 0 model calls",
          code: "",
        },
      },
    ],
    [
      { kind: "failed", reason: "provider_error", retryable: false, attempts: 1, message: "" },
      { case: "failed", value: { reason: FailureReason.PROVIDER_ERROR, message: "" } },
    ],
    [
      { kind: "finished", reason: "assistant_message", text: "cut", truncated: true },
      {
        case: "finished",
        value: { reason: FinishReason.ASSISTANT_MESSAGE, value: "cut", truncated: true },
      },
    ],
    [
      { kind: "stopped", reason: "output_truncated", toolName: "lookup", callId: "c9" },
      {
        case: "stopped",
        value: {
          reason: StopReason.OUTPUT_TRUNCATED,
          message:
            "the model's output was cut at its token limit inside the arguments of lookup (call c9); raise max_output_tokens",
          code: "",
        },
      },
    ],
    [
      { kind: "failed", reason: "internal", message: "boom" },
      { case: "failed", value: { reason: FailureReason.INTERNAL, message: "boom" } },
    ],
  ] satisfies [TurnOutcome, unknown][])("%o goes on the wire as %o", (outcome, kind) => {
    const pb = wire(outcome);
    expect({ case: pb.kind.case, value: { ...pb.kind.value } }).toEqual({
      case: kind.case,
      value: expect.objectContaining(kind.value) as unknown,
    });
  });
});

describe("stream events added for model servers in the wild", () => {
  const item = (event: SessionEvent): CursoredEvent => ({
    cursor: 7,
    sessionId: "s",
    turnId: "t",
    event,
  });
  const ids = PASS_THROUGH_IDS;

  test("provider_retry carries attempt, delay, cause and status (0 for a transport failure)", () => {
    const pb = overTheWire(
      TurnEventSchema,
      eventToProto(
        item({ type: "provider_retry", iteration: 2, attempt: 1, delayMs: 500, reason: "busy" }),
        ids,
      ),
    );
    expect(pb.event.case).toBe("providerRetry");
    expect(pb.event.value).toMatchObject({
      iteration: 2,
      attempt: 1,
      delayMs: 500n,
      reason: "busy",
      status: 0,
    });
  });

  test("reasoning_delta and output_truncated", () => {
    const reasoning = overTheWire(
      TurnEventSchema,
      eventToProto(item({ type: "reasoning_delta", text: "hm" }), ids),
    );
    expect(reasoning.event).toMatchObject({ case: "reasoningDelta", value: { text: "hm" } });
    const cut = overTheWire(
      TurnEventSchema,
      eventToProto(item({ type: "output_truncated", iteration: 3 }), ids),
    );
    expect(cut.event).toMatchObject({ case: "outputTruncated", value: { iteration: 3 } });
  });
});
