// One AgentSession builder (ADR 0037, "One AgentSession shape"): the session a stream event carries
// (built from the log) is a strict subset of the one GET /sessions/{id} answers (built from the
// store), keys and values alike, and their required actions are the same objects.
import { describe, expect, it } from "vitest";
import {
  agentSession,
  approvalAction,
  functionCallAction,
} from "../../../src/agents-api/agent-session-shape.js";
import { initialTranslatorState, translateLog } from "../../../src/agents-api/event-translator.js";
import type { CursoredEvent, SessionEvent } from "../../../src/domain/session-events.js";

const stored = {
  createdAt: 1_800_000_000,
  lastActiveAt: 1_800_000_100,
  agent: { id: "agent_1" },
  metadata: { team: "ops" },
  usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
};

function entries(events: SessionEvent[]): CursoredEvent[] {
  return events.map((event, i) => ({
    cursor: (i + 1) * 1_048_576,
    sessionId: "s1",
    turnId: "t1",
    event,
  }));
}

describe("the AgentSession of events and of GET /sessions/{id}", () => {
  it("an event's session is a strict subset of the stored one: the store's fields left out, the rest equal", () => {
    const actions = [
      functionCallAction("c1", "lookup", '{"q":"x"}', "t1"),
      approvalAction("c2", "ops__wipe", "{}", "t1"),
    ];
    const whole = agentSession({
      id: "s1",
      status: "requires_action",
      requiredActions: actions,
      stored,
    });
    const fromLog = agentSession({ id: "s1", status: "requires_action", requiredActions: actions });
    const wholeKeys = Object.keys(whole);
    const logKeys = Object.keys(fromLog);
    expect(logKeys.every((k) => wholeKeys.includes(k))).toBe(true);
    expect(wholeKeys.filter((k) => !logKeys.includes(k)).sort()).toEqual([
      "agent",
      "created_at",
      "last_active_at",
      "metadata",
      "usage",
    ]);
    for (const key of logKeys) expect(fromLog[key]).toEqual(whole[key]);
  });

  it("the translator's required actions are the builder's: a client call and an approval", () => {
    const { events } = translateLog(
      initialTranslatorState("s1"),
      entries([
        { type: "turn_started", inputIds: ["i1"], turnIndex: 1 },
        {
          type: "tool_call_requested",
          callId: "c1",
          toolName: "lookup",
          argumentsJson: '{"q":"x"}',
          deadlineMs: 0,
          idempotencyKey: "k1",
        },
        {
          type: "tool_approval_requested",
          callId: "c2",
          toolName: "ops__wipe",
          argumentsJson: "{}",
        },
      ]),
    );
    const last = events.at(-1) as unknown as { session: Record<string, unknown> };
    expect(last.session).toEqual(
      agentSession({
        id: "s1",
        status: "requires_action",
        requiredActions: [
          functionCallAction("c1", "lookup", '{"q":"x"}', "t1"),
          approvalAction("c2", "ops__wipe", "{}", "t1"),
        ],
      }),
    );
    expect(last.session.required_actions).toMatchObject([
      { type: "function_call", arguments: { q: "x" } },
      { type: "mcp_approval_request", request: { server_label: "ops", arguments: "{}" } },
    ]);
  });
});
