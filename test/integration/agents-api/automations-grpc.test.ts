// An automation changed over gRPC's ScheduleService stays the automation it was (ADR 0037,
// "Automations"): UpdateSchedule has no name or metadata fields, so the schedule actions keep the
// stored ones across it; the door then shows the new timing with the same name and metadata.
import { afterEach, describe, expect, it } from "vitest";
import { startAutomationDoor, type AutomationDoor } from "./automation-door.js";

let h: AutomationDoor | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("gRPC UpdateSchedule on an automation the door made", () => {
  it("keeps the automation's name and metadata and changes its timing", async () => {
    h = await startAutomationDoor();
    const agent = await h.sdk.beta.agents.create({ model: "echo" });
    const session = await h.sdk.beta.agents.sessions.create({
      agent_id: agent.id,
      environment: { type: "none" },
    });
    const auto = await h.sdk.beta.agents.automations.create({
      type: "periodic",
      name: "nightly digest",
      metadata: { team: "ops" },
      expression: "0 3 * * *",
      timezone: "UTC",
      target: { type: "existing_session", session_id: session.id, instructions: "digest" },
    });
    const updated = await h.schedules.updateSchedule({
      scheduleId: auto.id,
      target: { case: "session", value: { sessionId: session.id } },
      cron: "0 4 * * *",
      timezone: "UTC",
      input: [{ kind: { case: "text", value: "digest, later" } }],
    });
    expect(updated.schedule?.cron).toBe("0 4 * * *");
    const shown = await h.sdk.beta.agents.automations.retrieve(auto.id);
    expect(shown).toMatchObject({
      id: auto.id,
      name: "nightly digest",
      metadata: { team: "ops" },
      expression: "0 4 * * *",
      target: { type: "existing_session", instructions: "digest, later" },
    });
    // A gRPC-made schedule still has neither (and the door names it by its id).
    await h.schedules.createSchedule({
      scheduleId: "grpc-made",
      target: { case: "session", value: { sessionId: session.id } },
      cron: "0 * * * *",
      timezone: "UTC",
      input: [{ kind: { case: "text", value: "x" } }],
    });
    await h.schedules.updateSchedule({
      scheduleId: "grpc-made",
      target: { case: "session", value: { sessionId: session.id } },
      cron: "30 * * * *",
      timezone: "UTC",
      input: [{ kind: { case: "text", value: "y" } }],
    });
    expect(await h.sdk.beta.agents.automations.retrieve("grpc-made")).toMatchObject({
      name: "grpc-made",
      metadata: {},
    });
  });
});
