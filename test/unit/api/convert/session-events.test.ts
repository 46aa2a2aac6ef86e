// Session events written to the wire (domain → proto → bytes → proto): one row per kind with the
// oneof case and fields it must arrive as, and a coverage check whose list of kinds is read from
// the generated tether.v1.TurnEvent, so a kind added to the proto without a mapping fails here.
import { describe, expect, test } from "vitest";
import { PASS_THROUGH_IDS } from "../../../../src/api/convert/scalars.js";
import { eventToProto } from "../../../../src/api/convert/session-events.js";
import type { SessionEvent } from "../../../../src/domain/session-events.js";
import { ZERO_USAGE } from "../../../../src/domain/usage.js";
import {
  BudgetReached_Limit,
  BudgetReached_Scope,
  ResumeReason,
  ToolOrigin_Kind,
  TurnEventSchema,
} from "../../../../src/gen/tether/v1/turn_pb.js";
import { overTheWire } from "./support.js";

const usage = { ...ZERO_USAGE, inputTokens: 3, outputTokens: 4 };

/** Each row: a session event and the oneof case and (partial) value it must arrive as. */
const ROWS: [SessionEvent, string, Record<string, unknown>][] = [
  [{ type: "input_queued", inputId: "in-1" }, "inputQueued", { inputId: "in-1" }],
  [
    { type: "turn_started", inputIds: ["in-1"], turnIndex: 2, unavailableServers: ["mail"] },
    "turnStarted",
    { inputIds: ["in-1"], turnIndex: 2n, unavailableServers: ["mail"] },
  ],
  [
    { type: "turn_parked", pendingCallIds: ["c1"], approvalCallIds: ["c2"], expiresAtMs: 90 },
    "turnParked",
    { pendingCallIds: ["c1"], approvalCallIds: ["c2"], expiresAtMs: 90n },
  ],
  [{ type: "turn_resumed", reason: "expired" }, "turnResumed", { reason: ResumeReason.EXPIRED }],
  [
    { type: "tool_approval_requested", callId: "c2", toolName: "pay", argumentsJson: "{}" },
    "toolApprovalRequested",
    { callId: "c2", name: "pay", argumentsJson: "{}" },
  ],
  [{ type: "text_delta", text: "hi" }, "textDelta", { text: "hi" }],
  [
    {
      type: "tool_call_started",
      callId: "c1",
      toolName: "mail__send",
      argumentsJson: '{"to":"a"}',
      idempotencyKey: "s/t/c1",
      origin: { kind: "mcp", server: "mail" },
    },
    "toolCallStarted",
    {
      callId: "c1",
      name: "mail__send",
      argumentsJson: '{"to":"a"}',
      idempotencyKey: "s/t/c1",
      origin: { kind: ToolOrigin_Kind.MCP, server: "mail" },
    },
  ],
  [
    {
      type: "tool_call_requested",
      callId: "c3",
      toolName: "ask",
      argumentsJson: "{}",
      deadlineMs: 5000,
      idempotencyKey: "s/t/c3",
    },
    "toolCallRequested",
    { callId: "c3", name: "ask", deadlineMs: 5000n, idempotencyKey: "s/t/c3" },
  ],
  [
    { type: "tool_call_finished", callId: "c1", output: "sent", isError: false, durationMs: 12 },
    "toolCallFinished",
    { callId: "c1", output: "sent", isError: false, durationMs: 12n },
  ],
  [
    { type: "usage_reported", usage, iteration: 1 },
    "usageReported",
    { usage: { inputTokens: 3n, outputTokens: 4n }, iteration: 1 },
  ],
  [{ type: "input_admitted", inputIds: ["in-2"] }, "inputAdmitted", { inputIds: ["in-2"] }],
  [
    { type: "provider_retry", iteration: 1, attempt: 2, delayMs: 40, status: 503, reason: "busy" },
    "providerRetry",
    { iteration: 1, attempt: 2, delayMs: 40n, status: 503, reason: "busy" },
  ],
  [{ type: "reasoning_delta", text: "hm" }, "reasoningDelta", { text: "hm" }],
  [{ type: "output_truncated", iteration: 3 }, "outputTruncated", { iteration: 3 }],
  [
    { type: "budget_reached", scope: "session", limit: "cost_micros", max: 500, spent: 512 },
    "budgetReached",
    {
      scope: BudgetReached_Scope.SESSION,
      limit: BudgetReached_Limit.COST_MICROS,
      max: 500n,
      spent: 512n,
      unpricedModel: "",
    },
  ],
  [
    {
      type: "context_compacted",
      tokensBefore: 21_000,
      tokensAfter: 1_200,
      coversThroughMessage: 38,
      mode: "summarize",
      clearedToolResults: 0,
    },
    "contextCompacted",
    { tokensBefore: 21_000n, tokensAfter: 1_200n, coversThroughMessage: 38n },
  ],
  [{ type: "tool_value", valueJson: '{"n":1}' }, "toolValue", { valueJson: '{"n":1}' }],
  [
    {
      type: "turn_completed",
      outcome: { kind: "finished", reason: "assistant_message", text: "done" },
      headRevision: 4,
      usage,
    },
    "turnCompleted",
    { headRevision: 4n, outcome: { kind: { case: "finished", value: { value: "done" } } } },
  ],
  [
    { type: "gap", requestedAfterCursor: 10, retainedFromCursor: 20, snapshot: undefined },
    "gap",
    { requestedAfterCursor: 10n, retainedFromCursor: 20n },
  ],
];

const toWire = (event: SessionEvent) =>
  overTheWire(
    TurnEventSchema,
    eventToProto({ cursor: 7, sessionId: "s-1", turnId: "t-1", event }, PASS_THROUGH_IDS),
  );

describe("session events on the wire", () => {
  test.each(ROWS)("%o arrives as %s", (event, kind, value) => {
    const pb = toWire(event);
    expect(pb.cursor).toBe(7n);
    expect(pb.turnId).toBe("t-1");
    expect(pb.event.case).toBe(kind);
    expect(pb.event.value).toMatchObject(value);
  });

  test("covers every event kind of tether.v1.TurnEvent", () => {
    // Read from the generated descriptor: a kind added to the proto joins this list by itself.
    const oneof = TurnEventSchema.oneofs.find((o) => o.name === "event");
    const wireKinds = (oneof?.fields ?? []).map((f) => f.localName).sort();
    expect(wireKinds.length).toBeGreaterThan(0);
    const mapped = new Set(ROWS.map(([event]) => toWire(event).event.case));
    expect([...mapped].sort()).toEqual(wireKinds);
  });
});
