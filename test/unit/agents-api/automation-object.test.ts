// How a schedule reads as an Automation and its runs as invocations (ADR 0037, "Automations"):
// the status a once automation ends in, the pause reason a refusing target leaves, and each kind
// of run as an invocation's status, skip reason and error; ids made from the occurrence.
import { describe, expect, it } from "vitest";
import { createTenantScope } from "../../../src/api/tenancy.js";
import type { ScheduleRecord, ScheduleRun } from "../../../src/domain/schedules.js";
import {
  automationObject,
  invocationId,
  invocationObject,
  parseInvocationId,
} from "../../../src/agents-api/automation-object.js";

const scope = createTenantScope("t1");
const noAgents = { getAgent: async () => undefined };

function record(over: Partial<ScheduleRecord>, timing: object): ScheduleRecord {
  const spec = {
    target: { kind: "session", sessionId: "t1:s1", busyStrategy: "enqueue" },
    timing,
    input: [{ type: "text", text: "hi" }],
    catchUp: "one",
    name: "n",
    metadata: {},
  };
  return {
    tenant: "t1",
    scheduleId: "auto_x",
    spec: JSON.stringify(spec),
    revision: 1,
    paused: false,
    pausedReason: "",
    nextFireAt: undefined,
    lastFireAt: undefined,
    runNowAt: undefined,
    ...over,
  };
}

const ONCE = { kind: "at", at: 1_700_000_060_000 };

describe("automation objects", () => {
  it("a once automation with no occurrence left is completed; one still ahead is active", async () => {
    const done = await automationObject(record({}, ONCE), scope, noAgents);
    expect(done).toMatchObject({ type: "once", status: "completed", run_at: 1_700_000_060 });
    const ahead = await automationObject(record({ nextFireAt: ONCE.at }, ONCE), scope, noAgents);
    expect(ahead).toMatchObject({ status: "active", target: { session_id: "s1" } });
  });

  it("a pause its target caused reads target_session_failed; a client's pause has no reason", async () => {
    const refused = record(
      { paused: true, pausedReason: "target session s1 does not exist" },
      ONCE,
    );
    expect(await automationObject(refused, scope, noAgents)).toMatchObject({
      status: "paused",
      pause_reason: "target_session_failed",
    });
    const asked = record({ paused: true, pausedReason: "paused" }, ONCE);
    expect((await automationObject(asked, scope, noAgents)).pause_reason).toBeNull();
  });

  it("each kind of run reads as its invocation status, skip reason and error", async () => {
    const automation = await automationObject(record({}, ONCE), scope, noAgents);
    const base: ScheduleRun = {
      runId: "run-1",
      scheduledAt: 1_700_000_000_000,
      firedAt: 1_700_000_002_000,
      sessionId: "s1",
    };
    const of = (run: Partial<ScheduleRun>) => invocationObject({ ...base, ...run }, automation);
    expect(of({ inputId: "in-1" })).toMatchObject({
      status: "completed",
      scheduled_at: 1_700_000_000,
      created_at: 1_700_000_002,
      source: { type: "automation" },
    });
    expect(of({ inputId: "in-1", manual: true })).toMatchObject({
      id: "inv_m1700000000000",
      scheduled_at: null,
      source: { type: "manual" },
    });
    expect(of({ error: "busy", errorKind: "target_busy" })).toMatchObject({
      status: "skipped",
      skip_reason: "pending_delivery",
    });
    expect(of({ error: "gone", errorKind: "target_refused" })).toMatchObject({
      status: "failed",
      error: { code: "target_session_failed", message: "gone" },
    });
    expect(of({ skipReason: "missed_while_paused" })).toMatchObject({
      status: "skipped",
      error: { code: "missed_while_paused" },
    });
  });

  it("an invocation id names its occurrence and whether it was manual", () => {
    expect(parseInvocationId(invocationId(true, 42))).toEqual({ manual: true, at: 42 });
    expect(parseInvocationId(invocationId(false, 42))).toEqual({ manual: false, at: 42 });
    expect(parseInvocationId("inv_x1")).toBeUndefined();
  });
});
