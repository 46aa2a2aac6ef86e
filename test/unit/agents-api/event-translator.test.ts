// The one pure translator of the front door's event stream (ADR 0037, "Events out"): the same log
// gives the same events with the same ids, whether folded at once or resumed from any point; a
// text turn, a client tool call, a cancel and a failure come out as the SDKs expect them.
import { describe, expect, it } from "vitest";
import { isAfter, parseEventId } from "../../../src/agents-api/event-ids.js";
import {
  initialTranslatorState,
  translateLog,
  type DoorEvent,
} from "../../../src/agents-api/event-translator.js";
import type { CursoredEvent, SessionEvent } from "../../../src/domain/session-events.js";
import type { TurnOutcome } from "../../../src/domain/turn-outcome.js";
import { ZERO_USAGE } from "../../../src/domain/usage.js";

const SCALE = 2 ** 20;
const usage = { ...ZERO_USAGE, inputTokens: 7, outputTokens: 5, cacheReadTokens: 2 };

function log(turnId: string, events: SessionEvent[], firstSeq = 1): CursoredEvent[] {
  return events.map((event, i) => ({
    cursor: (firstSeq + i) * SCALE,
    sessionId: "s1",
    turnId,
    event,
  }));
}

const started = (inputIds = ["in1"]): SessionEvent => ({
  type: "turn_started",
  inputIds,
  turnIndex: 1,
});
const text = (t: string): SessionEvent => ({ type: "text_delta", text: t });
const completed = (outcome: TurnOutcome): SessionEvent => ({
  type: "turn_completed",
  outcome,
  headRevision: 1,
  usage,
});
const finished: TurnOutcome = { kind: "finished", reason: "assistant_message", text: "Hello" };

const translate = (entries: CursoredEvent[]) =>
  translateLog(initialTranslatorState("s1"), entries).events;
const types = (events: DoorEvent[]) => events.map((e) => e.type.replace("agent.session.", ""));

describe("the events translator", () => {
  it("a text turn: created, in progress, the message with its deltas, completed with usage, idle", () => {
    const events = translate(
      log("t1", [
        started(),
        text("Hel"),
        text("lo"),
        { type: "turn_parked", pendingCallIds: [], approvalCallIds: [], expiresAtMs: 1 },
        completed(finished),
      ]),
    );
    expect(types(events)).toEqual([
      "turn.created",
      "in_progress",
      "turn.in_progress",
      "turn.item.added",
      "turn.item.added",
      "turn.content_part.added",
      "turn.output_text.delta",
      "turn.output_text.delta",
      "turn.output_text.done",
      "turn.content_part.done",
      "turn.item.done",
      "turn.completed",
      "idle",
    ]);
    expect(events.map((e) => e.event_id)).toEqual([
      `evt_${SCALE}`,
      `evt_${SCALE}.1`,
      `evt_${SCALE}.2`,
      `evt_${SCALE}.3`,
      `evt_${2 * SCALE}`,
      `evt_${2 * SCALE}.1`,
      `evt_${2 * SCALE}.2`,
      `evt_${3 * SCALE}`,
      `evt_${5 * SCALE}`,
      `evt_${5 * SCALE}.1`,
      `evt_${5 * SCALE}.2`,
      `evt_${5 * SCALE}.3`,
      `evt_${5 * SCALE}.4`,
    ]);
    const [created, , , user, assistant] = events;
    expect(created).toMatchObject({ session_id: "s1", turn_id: "t1" });
    expect((created?.turn as Record<string, unknown>).subagent_id).toBeNull();
    expect(user).toMatchObject({ item: { id: "msg_in1", role: "user" }, output_index: null });
    expect(assistant).toMatchObject({
      item: { id: "msg_t1_0", role: "assistant", status: "in_progress", content: [] },
      output_index: 0,
    });
    expect(events[10]).toMatchObject({
      item: {
        id: "msg_t1_0",
        status: "completed",
        phase: "final_answer",
        content: [{ type: "output_text", text: "Hello" }],
      },
      output_index: 0,
    });
    const usageShown = {
      input_tokens: 7,
      input_tokens_details: { cached_tokens: 2 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 12,
    };
    expect(events[11]).toMatchObject({
      usage: usageShown,
      turn: { status: "completed", usage: usageShown, error: null, subagent_id: null },
    });
    expect(events[12]).toMatchObject({
      session: { id: "s1", status: "idle", required_actions: [] },
    });
  });

  it("is a pure function of the log: the same entries, folded at once or resumed at any entry, give the same events and ids", () => {
    const entries = log("t1", [started(["a", "b"]), text("x"), text("y"), completed(finished)]);
    const whole = translate(entries);
    expect(translate(entries)).toEqual(whole);
    for (let split = 0; split <= entries.length; split++) {
      const first = translateLog(initialTranslatorState("s1"), entries.slice(0, split));
      const rest = translateLog(first.state, entries.slice(split));
      expect([...first.events, ...rest.events]).toEqual(whole);
    }
    // The ids are places: each is after the one before it.
    for (let i = 1; i < whole.length; i++) {
      const place = parseEventId(whole[i]?.event_id ?? "", "after");
      expect(isAfter(place, parseEventId(whole[i - 1]?.event_id ?? "", "after"))).toBe(true);
    }
  });

  it("a client tool call: commentary closed, the call added, requires_action; its result answers it and the turn goes on", () => {
    const events = translate(
      log("t2", [
        started(),
        text("Let me look."),
        {
          type: "tool_call_requested",
          callId: "call_1",
          toolName: "get_weather",
          argumentsJson: '{"city":"Oslo"}',
          deadlineMs: 1,
          idempotencyKey: "k",
        },
        { type: "turn_parked", pendingCallIds: ["call_1"], approvalCallIds: [], expiresAtMs: 9 },
        { type: "turn_resumed", reason: "answered" },
        { type: "tool_call_finished", callId: "call_1", output: "sunny", isError: false },
        text("Sunny."),
        completed(finished),
      ]),
    );
    expect(types(events).slice(7)).toEqual([
      "turn.output_text.done",
      "turn.content_part.done",
      "turn.item.done",
      "turn.item.added",
      "requires_action",
      "turn.item.added",
      "turn.item.done",
      "in_progress",
      "turn.item.added",
      "turn.content_part.added",
      "turn.output_text.delta",
      "turn.output_text.done",
      "turn.content_part.done",
      "turn.item.done",
      "turn.completed",
      "idle",
    ]);
    expect(events[9]).toMatchObject({ item: { phase: "commentary", status: "completed" } });
    expect(events[10]).toMatchObject({
      item: {
        id: "fc_call_1",
        type: "function_call",
        call_id: "call_1",
        name: "get_weather",
        arguments: { city: "Oslo" },
        status: "in_progress",
      },
      output_index: 1,
    });
    expect(events[11]).toMatchObject({
      session: {
        status: "requires_action",
        required_actions: [
          { type: "function_call", call_id: "call_1", name: "get_weather", turn_id: "t2" },
        ],
      },
    });
    expect(events[12]).toMatchObject({
      item: { id: "fco_call_1", type: "function_call_output", output: "sunny" },
    });
    expect(events[13]).toMatchObject({ item: { id: "fc_call_1", status: "completed" } });
    expect(events[14]).toMatchObject({ session: { status: "in_progress", required_actions: [] } });
    expect(events[15]).toMatchObject({ item: { id: "msg_t2_1" }, output_index: 2 });
    expect(events[20]).toMatchObject({ item: { phase: "final_answer", status: "completed" } });
  });

  it("a cancel: open items done as incomplete, turn.cancelled, idle", () => {
    const events = translate(
      log("t3", [started(), text("Working"), completed({ kind: "stopped", reason: "cancelled" })]),
    );
    expect(types(events).slice(-5)).toEqual([
      "turn.output_text.done",
      "turn.content_part.done",
      "turn.item.done",
      "turn.cancelled",
      "idle",
    ]);
    expect(events.at(-3)).toMatchObject({ item: { status: "incomplete" } });
    expect(events.at(-2)).toMatchObject({ turn: { status: "cancelled", error: null } });
  });

  it("a failure: an error event, turn.failed with a code of the SDK's enum, idle (the session stays usable)", () => {
    const failed = (outcome: TurnOutcome) => {
      const events = translate(log("t4", [started(), completed(outcome)]));
      expect(types(events).slice(-3)).toEqual(["error", "turn.failed", "idle"]);
      const error = events.at(-2)?.turn as { error: { code: string; message: string } };
      expect(events.at(-3)).toMatchObject({ session_id: "s1", error: { code: error.error.code } });
      return error.error;
    };
    expect(
      failed({
        kind: "failed",
        reason: "provider_error",
        status: 500,
        retryable: true,
        attempts: 3,
        message: "boom",
      }),
    ).toEqual({ code: "server_error", message: "provider_error: boom" });
    expect(
      failed({
        kind: "failed",
        reason: "provider_error",
        status: 429,
        retryable: true,
        attempts: 3,
        message: "slow",
      }).code,
    ).toBe("rate_limit_exceeded");
    expect(failed({ kind: "stopped", reason: "park_expired" }).code).toBe("request_timeout");
    expect(failed({ kind: "stopped", reason: "max_iterations", iterations: 9 }).code).toBe(
      "internal_error",
    );
    expect(
      failed({ kind: "stopped", reason: "output_truncated", toolName: "t", callId: "c" }).code,
    ).toBe("max_output_tokens");
    expect(
      failed({ kind: "stopped", reason: "budget_exhausted", usedTokens: 9, budgetTokens: 8 }).code,
    ).toBe("usage_limit_exceeded");
    expect(failed({ kind: "failed", reason: "response_format_mismatch", message: "m" }).code).toBe(
      "invalid_request",
    );
  });

  it("a gap in the log: an error event with code cursor_expired", () => {
    const events = translate([
      {
        cursor: 40 * SCALE,
        sessionId: "s1",
        turnId: "",
        event: {
          type: "gap",
          requestedAfterCursor: SCALE,
          retainedFromCursor: 40 * SCALE,
          snapshot: undefined,
        },
      },
    ]);
    expect(events).toEqual([
      expect.objectContaining({
        event_id: `evt_${40 * SCALE}`,
        type: "error",
        error: expect.objectContaining({ code: "cursor_expired" }) as unknown,
      }),
    ]);
  });

  it("event ids: evt_<cursor>[.<n>] parse back to their place; anything else is refused", () => {
    expect(parseEventId("evt_1048576", "after")).toEqual({ cursor: 1048576, index: 0 });
    expect(parseEventId("evt_1048576.3", "after")).toEqual({ cursor: 1048576, index: 3 });
    for (const bad of ["", "evt_", "1048576", "evt_-1", "evt_1.x", "evt_99999999999999999"]) {
      expect(() => parseEventId(bad, "after"), bad).toThrow(/after/u);
    }
  });

  it("an approval: requires_action with an mcp_approval_request; the approved call starting resumes the session", () => {
    const events = translate(
      log("t5", [
        started(),
        { type: "tool_approval_requested", callId: "c9", toolName: "wipe", argumentsJson: "{}" },
        {
          type: "tool_call_started",
          callId: "c9",
          toolName: "wipe",
          argumentsJson: "{}",
          idempotencyKey: "k",
          origin: { kind: "mcp", server: "ops" },
        },
        { type: "tool_call_finished", callId: "c9", output: "done", isError: false },
        completed(finished),
      ]),
    );
    expect(types(events).slice(4)).toEqual([
      "requires_action",
      "in_progress",
      "turn.item.added",
      "turn.item.done",
      "turn.completed",
      "idle",
    ]);
    expect(events[4]).toMatchObject({
      session: {
        required_actions: [
          { type: "mcp_approval_request", request_id: "c9", request: { name: "wipe" } },
        ],
      },
    });
    expect(events[7]).toMatchObject({
      item: { id: "mcp_c9", type: "mcp_call", server_label: "ops", output: "done" },
    });
  });

  it("a cancel while a client call waits: the call done as incomplete, no output item, no resume", () => {
    const events = translate(
      log("t6", [
        started(),
        {
          type: "tool_call_requested",
          callId: "c1",
          toolName: "f",
          argumentsJson: "{}",
          deadlineMs: 1,
          idempotencyKey: "k",
        },
        { type: "tool_call_finished", callId: "c1", output: "x", isError: true, cancelled: true },
        completed({ kind: "stopped", reason: "cancelled" }),
      ]),
    );
    expect(types(events).slice(4)).toEqual([
      "turn.item.added",
      "requires_action",
      "turn.item.done",
      "turn.cancelled",
      "idle",
    ]);
    expect(events[6]).toMatchObject({ item: { id: "fc_c1", status: "incomplete" } });
  });
});
