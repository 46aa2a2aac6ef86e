// Automations on the OpenAI Agents API front door (ADR 0037, "Automations"), driven by the
// official Node SDK (`client.beta.agents.automations`) over the schedule actions ScheduleService
// shares, on a manual clock: CRUD, a periodic automation on an existing session fires once per
// occurrence, a once automation on a new session then shows `completed`, pause and resume,
// manual invocations (queued, then completed under the same id), a refusing target pauses with
// `target_session_failed`, list filters and pages, and refusals with the SDK's error classes.
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer } from "../../support/wired-server.js";
import { START, startAutomationDoor, type AutomationDoor } from "./automation-door.js";

let h: AutomationDoor | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start() {
  h = await startAutomationDoor();
  return h;
}

const none = { type: "none" as const };
const at = (iso: string) => Date.parse(iso);
const seconds = (ms: number) => Math.floor(ms / 1000);

async function sessionWithAgent(door: AutomationDoor) {
  const agent = await door.sdk.beta.agents.create({ model: "echo", name: "pinger" });
  const session = await door.sdk.beta.agents.sessions.create({
    agent_id: agent.id,
    environment: none,
  });
  return { agent, session };
}

/** The user texts of a session's transcript, once `count` turns have answered. */
async function userTexts(door: AutomationDoor, sessionId: string, count: number) {
  let texts: string[] = [];
  await waitFor(
    async () => {
      const { messages } = await door.sessions.listMessages({ sessionId });
      texts = messages
        .filter((m) => m.role === Role.USER)
        .flatMap((m) => m.parts.map((p) => (p.kind.case === "text" ? p.kind.value : "")));
      return messages.filter((m) => m.role === Role.ASSISTANT).length >= count;
    },
    { what: `${count} answered turns in ${sessionId}` },
  );
  return texts;
}

async function refusal(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe("automations through the official Node SDK", () => {
  it("creates, retrieves, updates, lists and deletes a periodic automation on an existing session", async () => {
    const door = await start();
    const { session } = await sessionWithAgent(door);
    const automations = door.sdk.beta.agents.automations;
    const created = await automations.create({
      type: "periodic",
      name: "minutely ping",
      expression: "* * * * *",
      timezone: "Europe/Paris",
      target: { type: "existing_session", session_id: session.id, instructions: "ping" },
      metadata: { team: "ops" },
    });
    expect(created.id).toMatch(/^auto_/u);
    expect(created).toMatchObject({
      object: "agent.automation",
      type: "periodic",
      name: "minutely ping",
      expression: "* * * * *",
      timezone: "Europe/Paris",
      status: "active",
      pause_reason: null,
      created_by: { type: "developer" },
      metadata: { team: "ops" },
      target: { type: "existing_session", session_id: session.id, instructions: "ping" },
    });
    expect(created.created_at).toBeGreaterThan(0);
    expect(await automations.retrieve(created.id)).toEqual(created);

    const updated = await automations.update(created.id, {
      name: "hourly ping",
      expression: "0 * * * *",
      metadata: { owner: "me" },
    });
    expect(updated).toMatchObject({
      name: "hourly ping",
      expression: "0 * * * *",
      timezone: "Europe/Paris",
      metadata: { owner: "me" },
    });
    const retyped = await refusal(
      automations.update(created.id, {
        target: {
          type: "new_session",
          agent_id: "a",
          environment: none,
          input: [{ role: "user", content: [{ type: "input_text", text: "x" }] }],
        },
      }),
    );
    expect(retyped).toBeInstanceOf(OpenAI.BadRequestError);
    expect(retyped.param).toBe("target.type");
    // The same schedule over gRPC: one engine behind both doors.
    const viaGrpc = await door.schedules.getSchedule({ scheduleId: created.id });
    expect(viaGrpc.schedule?.cron).toBe("0 * * * *");

    const page = await automations.list();
    expect(page.data.map((a) => a.id)).toEqual([created.id]);
    expect(await automations.delete(created.id)).toEqual({
      id: created.id,
      object: "agent.automation.deleted",
      deleted: true,
    });
    const gone = await refusal(automations.retrieve(created.id));
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(gone.message).toContain(`automation ${created.id} does not exist`);
  });

  it("a periodic automation on an existing session fires once per occurrence, however often the poller looks", async () => {
    const door = await start();
    const { session } = await sessionWithAgent(door);
    const automations = door.sdk.beta.agents.automations;
    const auto = await automations.create({
      type: "periodic",
      name: "tick",
      expression: "* * * * *",
      timezone: "UTC",
      target: { type: "existing_session", session_id: session.id, instructions: "tick" },
    });
    await door.poll();
    expect((await automations.invocations.list(auto.id)).data).toEqual([]);
    door.clock.set(at("2026-03-01T10:01:00Z"));
    await door.poll();
    await door.poll();
    door.clock.advance(30_000);
    await door.poll();
    expect(await userTexts(door, session.id, 1)).toEqual(["tick"]);
    door.clock.set(at("2026-03-01T10:02:00Z"));
    await door.poll();
    await door.poll();
    expect(await userTexts(door, session.id, 2)).toEqual(["tick", "tick"]);

    const invocations = (await automations.invocations.list(auto.id)).data;
    expect(invocations.map((i) => i.scheduled_at)).toEqual([
      seconds(at("2026-03-01T10:02:00Z")),
      seconds(at("2026-03-01T10:01:00Z")),
    ]);
    const [latest] = invocations;
    expect(latest).toMatchObject({
      object: "agent.automation.invocation",
      automation_id: auto.id,
      status: "completed",
      session_id: session.id,
      skip_reason: null,
      error: null,
      source: { type: "automation", automation: { id: auto.id, type: "periodic" } },
    });
    const again = await automations.invocations.retrieve(latest!.id, { automation_id: auto.id });
    expect(again).toEqual(latest);
  });

  it("a once automation makes a new session of the agent, then shows completed", async () => {
    const door = await start();
    const agent = await door.sdk.beta.agents.create({ model: "echo" });
    const automations = door.sdk.beta.agents.automations;
    const runAt = seconds(START) + 60;
    const auto = await automations.create({
      type: "once",
      name: "one report",
      run_at: runAt,
      target: {
        type: "new_session",
        agent_id: agent.id,
        environment: none,
        input: [{ role: "user", content: [{ type: "input_text", text: "write the report" }] }],
        metadata: { kind: "report" },
      },
    });
    expect(auto).toMatchObject({
      type: "once",
      run_at: runAt,
      status: "active",
      target: {
        type: "new_session",
        agent_id: agent.id,
        agent: null,
        environment: { type: "none" },
        metadata: { kind: "report" },
        vault_ids: [],
        input: [
          {
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "write the report" }],
          },
        ],
      },
    });
    await door.poll();
    expect((await automations.retrieve(auto.id)).status).toBe("active");
    door.clock.set(runAt * 1000);
    await door.poll();
    await door.poll();
    expect((await automations.retrieve(auto.id)).status).toBe("completed");
    const [inv, ...more] = (await automations.invocations.list(auto.id)).data;
    expect(more).toEqual([]);
    expect(inv).toMatchObject({ status: "completed", scheduled_at: runAt });
    const made = await door.sdk.beta.agents.sessions.retrieve(inv!.session_id!);
    expect(made.metadata).toEqual({ kind: "report" });
    expect(made.agent?.id).toBe(agent.id);
    expect(await userTexts(door, inv!.session_id!, 1)).toEqual(["write the report"]);
    // Its occurrence happened: a new run_at is refused, as the SDK documents.
    const late = await refusal(automations.update(auto.id, { run_at: runAt + 3600 }));
    expect(late).toBeInstanceOf(OpenAI.BadRequestError);
    expect(late.param).toBe("run_at");
  });

  it("an inline agent is written as the automation's hidden agent and shown back as its config", async () => {
    const door = await start();
    const automations = door.sdk.beta.agents.automations;
    const auto = await automations.create({
      type: "periodic",
      name: "inline",
      expression: "*/5 * * * *",
      timezone: "UTC",
      target: {
        type: "new_session",
        agent: { model: "echo", instructions: "Be brief." },
        environment: none,
        input: [{ role: "user", content: [{ type: "input_text", text: "status?" }] }],
      },
    });
    expect(auto.target).toMatchObject({
      type: "new_session",
      agent_id: null,
      agent: { model: "echo", instructions: "Be brief." },
    });
    const manual = await automations.invocations.create(auto.id);
    await door.poll();
    const done = await automations.invocations.retrieve(manual.id, { automation_id: auto.id });
    const made = await door.sdk.beta.agents.sessions.retrieve(done.session_id!);
    expect(made.agent).toMatchObject({ id: `inline_${auto.id}`, instructions: "Be brief." });
    await automations.delete(auto.id);
  });

  it("pause holds the occurrences; resume goes on from the next one; a once past its run_at resumes only with a new run_at", async () => {
    const door = await start();
    const { session } = await sessionWithAgent(door);
    const automations = door.sdk.beta.agents.automations;
    const auto = await automations.create({
      type: "periodic",
      name: "tick",
      expression: "* * * * *",
      timezone: "UTC",
      target: { type: "existing_session", session_id: session.id, instructions: "tick" },
    });
    expect((await automations.pause(auto.id)).status).toBe("paused");
    expect((await automations.retrieve(auto.id)).pause_reason).toBeNull();
    door.clock.set(at("2026-03-01T10:03:10Z"));
    await door.poll();
    expect((await automations.invocations.list(auto.id)).data).toEqual([]);
    expect((await automations.resume(auto.id)).status).toBe("active");
    door.clock.set(at("2026-03-01T10:04:00Z"));
    await door.poll();
    const listed = (await automations.invocations.list(auto.id)).data;
    expect(listed.map((i) => i.scheduled_at)).toEqual([seconds(at("2026-03-01T10:04:00Z"))]);

    const once = await automations.create({
      type: "once",
      name: "later",
      run_at: seconds(door.clock.nowMs()) + 60,
      target: { type: "existing_session", session_id: session.id, instructions: "once" },
    });
    await automations.pause(once.id);
    door.clock.advance(120_000);
    const refused = await refusal(automations.resume(once.id));
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.param).toBe("run_at");
    const moved = await automations.update(once.id, { run_at: seconds(door.clock.nowMs()) + 60 });
    expect(moved.status).toBe("paused");
    expect((await automations.resume(once.id)).status).toBe("active");
  });

  it("a manual invocation is queued, then fires once and lists under the same id with source manual", async () => {
    const door = await start();
    const { session } = await sessionWithAgent(door);
    const automations = door.sdk.beta.agents.automations;
    const auto = await automations.create({
      type: "periodic",
      name: "daily",
      expression: "0 9 * * *",
      timezone: "UTC",
      target: { type: "existing_session", session_id: session.id, instructions: "now please" },
    });
    const queued = await automations.invocations.create(auto.id);
    expect(queued).toMatchObject({
      object: "agent.automation.invocation",
      automation_id: auto.id,
      status: "queued",
      scheduled_at: null,
      session_id: session.id,
      source: { type: "manual" },
    });
    expect(await automations.invocations.retrieve(queued.id, { automation_id: auto.id })).toEqual(
      queued,
    );
    await door.poll();
    await door.poll();
    const fired = await automations.invocations.retrieve(queued.id, { automation_id: auto.id });
    expect(fired).toMatchObject({ id: queued.id, status: "completed", source: { type: "manual" } });
    expect(await userTexts(door, session.id, 1)).toEqual(["now please"]);
    // The regular timing is untouched by the manual run.
    const viaGrpc = await door.schedules.getSchedule({ scheduleId: auto.id });
    expect(viaGrpc.schedule?.nextFireAtMs).toBe(BigInt(at("2026-03-01T09:00:00Z") + 86_400_000));
    door.clock.advance(1_000);
    const second = await automations.invocations.create(auto.id);
    expect(second.id).not.toBe(queued.id);
    await door.poll();
    const ids = (await automations.invocations.list(auto.id)).data.map((i) => i.id);
    expect(ids).toEqual([second.id, queued.id]);
  });

  it("a target session that is gone pauses the automation with target_session_failed and a failed invocation", async () => {
    const door = await start();
    const { session } = await sessionWithAgent(door);
    const automations = door.sdk.beta.agents.automations;
    const auto = await automations.create({
      type: "periodic",
      name: "tick",
      expression: "* * * * *",
      timezone: "UTC",
      target: { type: "existing_session", session_id: session.id, instructions: "tick" },
    });
    await door.sdk.beta.agents.sessions.delete(session.id);
    door.clock.set(at("2026-03-01T10:01:00Z"));
    await door.poll();
    const paused = await automations.retrieve(auto.id);
    expect(paused).toMatchObject({ status: "paused", pause_reason: "target_session_failed" });
    const [failed] = (await automations.invocations.list(auto.id)).data;
    expect(failed).toMatchObject({
      status: "failed",
      session_id: session.id,
      error: { code: "target_session_failed" },
    });
    expect(failed?.error?.message).toContain(`session ${session.id} does not exist`);
  });

  it("lists newest first with the session_id filter, cursor pages and order asc", async () => {
    const door = await start();
    const a = (await sessionWithAgent(door)).session;
    const b = await door.sdk.beta.agents.sessions.create({
      agent_id: (await door.sdk.beta.agents.create({ model: "echo" })).id,
      environment: none,
    });
    const automations = door.sdk.beta.agents.automations;
    const made: string[] = [];
    for (const [i, session] of [a, b, a].entries()) {
      const auto = await automations.create({
        type: "periodic",
        name: `n${i}`,
        expression: "0 * * * *",
        timezone: "UTC",
        target: { type: "existing_session", session_id: session.id, instructions: "x" },
      });
      made.push(auto.id);
    }
    // A schedule made over gRPC is not listed (only door-made `auto_` ids are).
    await door.schedules.createSchedule({
      scheduleId: "grpc-made",
      target: { case: "session", value: { sessionId: a.id } },
      cron: "0 * * * *",
      timezone: "UTC",
      input: [{ kind: { case: "text", value: "x" } }],
    });
    const newestFirst = [...made].reverse();
    const all: string[] = [];
    for await (const auto of automations.list({ limit: 1 })) all.push(auto.id);
    expect(all).toEqual(newestFirst);
    const onA = await automations.list({ session_id: a.id });
    expect(onA.data.map((x) => x.id)).toEqual([made[2], made[0]]);
    const asc = await automations.list({ order: "asc", limit: 2 });
    expect(asc.data.map((x) => x.id)).toEqual(made.slice(0, 2));
    expect(asc.has_more).toBe(true);
    const rest = await automations.list({ order: "asc", after: made[1]! });
    expect(rest.data.map((x) => x.id)).toEqual([made[2]]);
  });

  const refusals: [string, Record<string, unknown>][] = [
    ["expression", { type: "periodic", expression: "61 * * * *", timezone: "UTC" }],
    ["timezone", { type: "periodic", expression: "* * * * *", timezone: "Mars/Base" }],
    ["run_at", { type: "once", run_at: 1_000 }],
    ["expression", { type: "once", run_at: 4_000_000_000, expression: "* * * * *" }],
  ];
  it.each(refusals)(
    "refuses a bad %s with the SDK's BadRequestError naming it",
    async (param, fields) => {
      const door = await start();
      const { session } = await sessionWithAgent(door);
      const body = {
        name: "bad",
        target: { type: "existing_session", session_id: session.id, instructions: "x" },
        ...fields,
      };
      const error = await refusal(door.sdk.beta.agents.automations.create(body as never));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe(param);
    },
  );

  it("refuses targets Tether cannot serve by name, and unknown targets as NotFoundError", async () => {
    const door = await start();
    const automations = door.sdk.beta.agents.automations;
    const input = [
      { role: "user" as const, content: [{ type: "input_text" as const, text: "x" }] },
    ];
    const base = { type: "periodic", name: "n", expression: "* * * * *", timezone: "UTC" } as const;
    const hosted = await refusal(
      automations.create({
        ...base,
        target: {
          type: "new_session",
          agent_id: "a",
          environment: { type: "openai_hosted" } as never,
          input,
        },
      }),
    );
    expect(hosted.param).toBe("target.environment.type");
    const vaults = await refusal(
      automations.create({
        ...base,
        target: { type: "new_session", agent_id: "a", environment: none, input, vault_ids: ["v"] },
      }),
    );
    expect(vaults.param).toBe("target.vault_ids");
    const both = await refusal(
      automations.create({
        ...base,
        target: {
          type: "new_session",
          agent_id: "a",
          agent: { model: "m" },
          environment: none,
          input,
        },
      }),
    );
    expect(both.param).toBe("target.agent_id");
    const modelless = await refusal(
      automations.create({
        ...base,
        target: { type: "new_session", agent: { instructions: "x" }, environment: none, input },
      }),
    );
    expect(modelless.param).toBe("target.agent.model");
    const noAgent = await refusal(
      automations.create({
        ...base,
        target: { type: "new_session", agent_id: "agent_missing", environment: none, input },
      }),
    );
    expect(noAgent).toBeInstanceOf(OpenAI.NotFoundError);
    const noSession = await refusal(
      automations.create({
        ...base,
        target: { type: "existing_session", session_id: "sess_missing", instructions: "x" },
      }),
    );
    expect(noSession).toBeInstanceOf(OpenAI.NotFoundError);
    const noInvocation = await refusal(
      automations.invocations.retrieve("inv_m1", { automation_id: "auto_missing" }),
    );
    expect(noInvocation).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await door.sdk.beta.agents.automations.list()).toMatchObject({ data: [] });
  });

  it("the composition main.ts makes serves automations over ScheduleService's actions", async () => {
    const wired = await startWiredServer({});
    try {
      const sdk = new OpenAI({ baseURL: `${wired.baseUrl}/v1`, apiKey: "k", maxRetries: 0 });
      const agent = await sdk.beta.agents.create({ model: "echo" });
      const auto = await sdk.beta.agents.automations.create({
        type: "periodic",
        name: "wired",
        expression: "0 0 1 1 *",
        timezone: "UTC",
        target: {
          type: "new_session",
          agent_id: agent.id,
          environment: none,
          input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }],
        },
      });
      const queued = await sdk.beta.agents.automations.invocations.create(auto.id);
      // The wired poller (real clock) fires the run-now on its own.
      await waitFor(
        async () =>
          (
            await sdk.beta.agents.automations.invocations.retrieve(queued.id, {
              automation_id: auto.id,
            })
          ).status === "completed",
        { what: "the manual invocation to complete" },
      );
    } finally {
      await wired.close();
    }
  });
});
