// Automations across three replicas on one Redis (ADR 0037, "Automations"; ADR 0020): each
// replica has its own runtime, schedule poller and front door, on the real clock (Redis TIME).
// A periodic automation's occurrence, once automations made through different doors and manual
// invocations asked of all three doors at once each fire exactly once: one invocation, one input
// in the session's transcript. The per-minute cron makes this test wait for the next minute.
import { createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Redis } from "ioredis";
import OpenAI from "openai-agents-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createScheduleActions } from "../../../src/api/schedule-actions.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import { systemClock } from "../../../src/ports/clock.js";
import { createModelProvider } from "../../../src/providers/index.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { createScheduleFirer, startScheduler, type Scheduler } from "../../../src/runtime/index.js";
import { loadConfig } from "../../../src/server/config.js";
import { createLogger } from "../../../src/server/logger.js";
import { createMetrics } from "../../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../../src/server/server.js";
import { createRuntimeHarness, type RuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const ENV = { TETHER_PORT: "0", TETHER_METRICS_PORT: "0", TETHER_LOG_LEVEL: "silent" };

interface Replica {
  harness: RuntimeHarness;
  server: TetherServer;
  scheduler: Scheduler;
  transport: Transport;
  sdk: OpenAI;
}

async function startReplica(ownerId: string, redis: Redis, namespace: string): Promise<Replica> {
  const harness = createRuntimeHarness({
    provider: createModelProvider({ kind: "echo" }),
    ownerId,
    leaseTtlMs: 2_000,
    namespace,
    redis,
  });
  const scheduler = startScheduler({
    schedules: harness.schedules,
    firer: createScheduleFirer(harness.deps, harness.runtime.driver),
    deps: { sleep: harness.deps.sleep, logger: silentLogger },
    pollMaxMs: 25,
  });
  const scheduleOptions = {
    schedules: harness.schedules,
    store: harness.store,
    clock: systemClock,
    wake: scheduler.wake,
  };
  const server = await createTetherServer({
    config: loadConfig(ENV),
    store: harness.store,
    logger: createLogger({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    runtime: harness.runtime,
    schedules: createScheduleActions(scheduleOptions),
    routes: (router) => {
      router.service(SessionService, createSessionService({ store: harness.store }));
      router.service(AgentService, createAgentService(harness.store));
    },
  });
  const baseUrl = `http://127.0.0.1:${server.port}`;
  return {
    harness,
    server,
    scheduler,
    transport: createGrpcTransport({ baseUrl }),
    sdk: new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: "any-key", maxRetries: 0 }),
  };
}

describe("automations over three replicas on Redis", () => {
  let redis: Redis;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    redis = new Redis(inject("redisUrl"));
    const namespace = `automations-${Date.now()}`;
    for (const name of ["a", "b", "c"]) {
      replicas.push(await startReplica(`automations-${name}`, redis, namespace));
    }
  });

  afterAll(async () => {
    for (const r of replicas) {
      await r.scheduler.stop();
      await r.harness.runtime.drain(2_000);
      await r.server.close();
    }
    replicas = [];
    await redis.quit();
  });

  /** The user texts of a session, once `turns` of its turns have answered. */
  async function userTexts(sessionId: string, turns: number): Promise<string[]> {
    const sessions = createClient(SessionService, replicas[0]!.transport);
    let texts: string[] = [];
    await waitFor(
      async () => {
        const { messages } = await sessions.listMessages({ sessionId });
        texts = messages
          .filter((m) => m.role === Role.USER)
          .flatMap((m) => m.parts.map((p) => (p.kind.case === "text" ? p.kind.value : "")));
        return messages.filter((m) => m.role === Role.ASSISTANT).length >= turns;
      },
      { what: `${turns} answered turns of ${sessionId}`, timeoutMs: 30_000 },
    );
    return texts;
  }

  it("each occurrence, once automation and manual invocation fires exactly once across the replicas", async () => {
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const agent = await a.sdk.beta.agents.create({ model: "echo" });
    const session = await b.sdk.beta.agents.sessions.create({
      agent_id: agent.id,
      environment: { type: "none" },
    });
    const target = (instructions: string) => ({
      type: "existing_session" as const,
      session_id: session.id,
      instructions,
    });
    const periodic = await a.sdk.beta.agents.automations.create({
      type: "periodic",
      name: "minutely",
      expression: "* * * * *",
      timezone: "UTC",
      target: target("minutely"),
    });
    const runAt = Math.floor(Date.now() / 1000) + 2;
    const onces = await Promise.all(
      [a, b, c].map((r, i) =>
        r.sdk.beta.agents.automations.create({
          type: "once",
          name: `once ${i}`,
          run_at: runAt,
          target: target(`once ${i}`),
        }),
      ),
    );
    const manual = await c.sdk.beta.agents.automations.create({
      type: "periodic",
      name: "yearly",
      expression: "0 0 1 1 *",
      timezone: "UTC",
      target: target("manual"),
    });
    // Asked of all three doors at once: one pending request, one fire.
    const asked = await Promise.all(
      [a, b, c].map((r) => r.sdk.beta.agents.automations.invocations.create(manual.id)),
    );
    expect(new Set(asked.map((inv) => inv.id)).size).toBe(1);

    // The per-minute cron's next occurrence: up to a minute away.
    await waitFor(
      async () =>
        (await c.sdk.beta.agents.automations.invocations.list(periodic.id)).data.length > 0,
      { what: "the periodic automation's first occurrence", timeoutMs: 90_000, intervalMs: 250 },
    );
    await a.sdk.beta.agents.automations.pause(periodic.id);
    const texts = await userTexts(session.id, 5);
    expect([...texts].sort()).toEqual(["manual", "minutely", "once 0", "once 1", "once 2"]);

    const [fired] = (await b.sdk.beta.agents.automations.invocations.list(periodic.id)).data;
    expect(fired).toMatchObject({ status: "completed", source: { type: "automation" } });
    for (const once of onces) {
      const listed = (await a.sdk.beta.agents.automations.invocations.list(once.id)).data;
      expect(listed.map((inv) => inv.status)).toEqual(["completed"]);
      expect((await b.sdk.beta.agents.automations.retrieve(once.id)).status).toBe("completed");
    }
    const manualRuns = (await b.sdk.beta.agents.automations.invocations.list(manual.id)).data;
    expect(manualRuns.map((inv) => [inv.id, inv.status])).toEqual([[asked[0]!.id, "completed"]]);
  }, 150_000);
});
