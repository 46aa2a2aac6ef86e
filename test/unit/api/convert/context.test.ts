// The compaction policy read from TurnOptions and agent definitions: only the fields set, each
// refusal naming its field; the failure reason and the context_compacted event on the wire.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import { definitionFromProto, definitionToProto } from "../../../../src/api/convert/agents.js";
import { eventToProto } from "../../../../src/api/convert/session-events.js";
import { PASS_THROUGH_IDS } from "../../../../src/api/convert/scalars.js";
import { outcomeToProto, settingsFromProto } from "../../../../src/api/convert/turn.js";
import { AgentDefinitionSchema } from "../../../../src/gen/tether/v1/agent_service_pb.js";
import { CompactionMode, UsagePurpose } from "../../../../src/gen/tether/v1/context_pb.js";
import { FailureReason, TurnOptionsSchema } from "../../../../src/gen/tether/v1/turn_pb.js";
import { expectRefusal } from "./support.js";

describe("context management on the wire", () => {
  test("a turn's policy keeps only the fields it sets", () => {
    const options = create(TurnOptionsSchema, {
      contextManagement: {
        triggerTokens: 60_000n,
        clearToolResults: { keepLast: 3, excludeTools: ["read_file"] },
        mode: CompactionMode.AUTO,
      },
    });
    expect(settingsFromProto(options).contextManagement).toEqual({
      triggerTokens: 60_000,
      clearToolResults: { keepLast: 3, excludeTools: ["read_file"] },
      mode: "auto",
    });
  });

  test("a trigger under 1000 is refused naming the field, on a turn and on an agent", () => {
    const low = { contextManagement: { triggerTokens: 500n } };
    expectRefusal(
      () => settingsFromProto(create(TurnOptionsSchema, low)),
      "options.context_management.trigger_tokens",
    );
    expectRefusal(
      () => definitionFromProto(create(AgentDefinitionSchema, low)),
      "definition.context_management.trigger_tokens",
    );
  });

  test("an agent's policy goes round the store's encoding", () => {
    const definition = definitionFromProto(
      create(AgentDefinitionSchema, {
        contextManagement: { triggerTokens: 80_000n, keepRecentTokens: 9000n, instructions: "x" },
      }),
    );
    expect(definition.contextManagement).toEqual({
      triggerTokens: 80_000,
      keepRecentTokens: 9000,
      instructions: "x",
    });
    const back = definitionToProto(definition).contextManagement;
    expect(back?.triggerTokens).toBe(80_000n);
    expect(back?.keepRecentTokens).toBe(9000n);
    expect(back?.instructions).toBe("x");
  });

  test("compaction_failed, context_compacted and the summary's usage have their wire forms", () => {
    const failed = outcomeToProto({
      kind: "failed",
      reason: "compaction_failed",
      attempts: 4,
      message: "the summary call failed: overloaded",
    });
    expect(failed.kind.case === "failed" && failed.kind.value.reason).toBe(
      FailureReason.COMPACTION_FAILED,
    );
    const compacted = eventToProto(
      {
        cursor: 7,
        sessionId: "s",
        turnId: "t",
        event: {
          type: "context_compacted",
          tokensBefore: 21_000,
          tokensAfter: 1_200,
          coversThroughMessage: 38,
          mode: "summarize",
          clearedToolResults: 2,
        },
      },
      PASS_THROUGH_IDS,
    );
    expect(compacted.event.case).toBe("contextCompacted");
    expect(compacted.event.value).toMatchObject({
      tokensBefore: 21_000n,
      tokensAfter: 1_200n,
      coversThroughMessage: 38n,
      mode: CompactionMode.SUMMARIZE,
      clearedToolResults: 2,
    });
    const usage = eventToProto(
      {
        cursor: 8,
        sessionId: "s",
        turnId: "t",
        event: {
          type: "usage_reported",
          iteration: 1,
          purpose: "compaction",
          usage: {
            inputTokens: 900,
            outputTokens: 40,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
          },
        },
      },
      PASS_THROUGH_IDS,
    );
    expect(usage.event.case === "usageReported" && usage.event.value.purpose).toBe(
      UsagePurpose.COMPACTION,
    );
  });
});
