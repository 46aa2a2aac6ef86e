// Schedules end to end (ADR 0020), on memory, Redis and Redis Cluster: two replicas (each its own
// runtime, schedule poller and server) share one store. Due occurrences fire exactly once and
// their turns run (the transcript shows the input once); an agent target gets a new session per
// fire; a deleted target pauses the schedule with the reason; bad bodies are typed errors.
// One-off instants already past and run-now make fires due at once on the store's real clock,
// so nothing here waits for a cron minute (the cron timing itself is tested on a manual clock).
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { Cluster } from "ioredis";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { routeScheduleService, routeTurnService } from "../../../src/api/routes.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import {
  CatchUp,
  ScheduleService,
  type CreateScheduleRequest,
} from "../../../src/gen/tether/v1/schedule_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreateScheduleRequestSchema } from "../../../src/gen/tether/v1/schedule_service_pb.js";
import { systemClock } from "../../../src/ports/clock.js";
import { createModelProvider } from "../../../src/providers/index.js";
import { createScheduleFirer, startScheduler, type Scheduler } from "../../../src/runtime/index.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { loadConfig } from "../../../src/server/config.js";
import { createLogger } from "../../../src/server/logger.js";
import { createMetrics } from "../../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../../src/server/server.js";
import { expectCode } from "../../support/api-clients.js";
import { connectCluster } from "../../support/redis-store-factory.js";
import { createRuntimeHarness, type RuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const ENV = { TETHER_PORT: "0", TETHER_METRICS_PORT: "0", TETHER_LOG_LEVEL: "silent" };
const text = (value: string) => [{ kind: { case: "text" as const, value } }];
type CreateBody = MessageInitShape<typeof CreateScheduleRequestSchema>;

interface Replica {
  harness: RuntimeHarness;
  server: TetherServer;
  scheduler: Scheduler;
  transport: Transport;
}

async function startReplica(
  ownerId: string,
  backend: { redis?: Redis | Cluster; namespace: string; shareWith?: RuntimeHarness },
): Promise<Replica> {
  const harness = createRuntimeHarness({
    provider: createModelProvider({ kind: "echo" }),
    ownerId,
    leaseTtlMs: 2_000,
    namespace: backend.namespace,
    ...(backend.redis && { redis: backend.redis }),
    ...(backend.shareWith && { shareWith: backend.shareWith }),
  });
  const scheduler = startScheduler({
    schedules: harness.schedules,
    firer: createScheduleFirer(harness.deps, harness.runtime.driver),
    deps: { sleep: harness.deps.sleep, logger: silentLogger },
    pollMaxMs: 25,
  });
  const server = await createTetherServer({
    config: loadConfig(ENV),
    store: harness.store,
    logger: createLogger({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    routes: (router) => {
      routeTurnService(router, { runtime: harness.runtime });
      routeScheduleService(router, {
        schedules: harness.schedules,
        store: harness.store,
        clock: systemClock,
        wake: scheduler.wake,
      });
    },
  });
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` });
  return { harness, server, scheduler, transport };
}

const BACKENDS = [
  { name: "memory", connect: () => undefined },
  { name: "redis", connect: () => new Redis(inject("redisUrl")) },
  { name: "redis cluster", connect: () => connectCluster(inject("clusterPorts")) },
] as const;

for (const backend of BACKENDS) {
  describe(`schedules over two replicas (${backend.name})`, () => {
    let redis: Redis | Cluster | undefined;
    let a: Replica;
    let b: Replica;
    const schedulesOf = (r: Replica) => createClient(ScheduleService, r.transport);
    const sessionsOf = (r: Replica) => createClient(SessionService, r.transport);

    /** The user texts of a session's transcript, in order. */
    async function userTexts(sessionId: string): Promise<string[]> {
      const { messages } = await sessionsOf(a).listMessages({ sessionId });
      return messages
        .filter((m) => m.role === Role.USER)
        .flatMap((m) => m.parts.map((p) => (p.kind.case === "text" ? p.kind.value : "")));
    }

    /** Waits for the assistant's answer, i.e. for the fired turn to have committed. */
    async function turnsDone(sessionId: string, count: number): Promise<void> {
      await waitFor(
        async () => {
          // An agent target's session exists only once its fire has created it.
          const page = await sessionsOf(b)
            .listMessages({ sessionId })
            .catch((error: unknown) => {
              if (ConnectError.from(error).code === Code.NotFound) return undefined;
              throw error;
            });
          return (page?.messages ?? []).filter((m) => m.role === Role.ASSISTANT).length >= count;
        },
        { what: `${count} turn(s) of ${sessionId}` },
      );
    }

    beforeAll(async () => {
      redis = backend.connect();
      const namespace = `schedules-${backend.name.replace(" ", "-")}-${Date.now()}`;
      a = await startReplica("replica-a", { ...(redis && { redis }), namespace });
      b = await startReplica("replica-b", {
        ...(redis ? { redis } : { shareWith: a.harness }),
        namespace,
      });
    });

    afterAll(async () => {
      for (const r of [a, b]) {
        await r.scheduler.stop();
        await r.harness.runtime.drain(2_000);
        await r.server.close();
      }
      await redis?.quit();
    });

    test("two replicas fire each due occurrence exactly once, and its turn runs", async () => {
      const past = BigInt(Date.now() - 1_000);
      const ids = Array.from({ length: 6 }, (_, i) => `once-${i}`);
      for (const [i, id] of ids.entries()) {
        await sessionsOf(a).createSession({ sessionId: `target-${id}` });
        await schedulesOf(i % 2 === 0 ? a : b).createSchedule({
          scheduleId: id,
          target: { case: "session", value: { sessionId: `target-${id}` } },
          atMs: past,
          input: text(`report ${id}`),
        });
      }
      for (const id of ids) {
        await turnsDone(`target-${id}`, 1);
        const { runs } = await schedulesOf(b).listScheduleRuns({ scheduleId: id });
        expect(runs).toHaveLength(1);
        expect(runs[0]).toMatchObject({
          runId: `run-${past}`,
          scheduledAtMs: past,
          sessionId: `target-${id}`,
          error: "",
        });
        expect(runs[0]?.inputId).not.toBe("");
        expect(await userTexts(`target-${id}`)).toEqual([`report ${id}`]);
        const { schedule } = await schedulesOf(a).getSchedule({ scheduleId: id });
        expect(schedule).toMatchObject({ nextFireAtMs: 0n, lastFireAtMs: past, paused: false });
      }
    });

    test("run-now fires a cron schedule once now, leaving its regular timing as it was", async () => {
      await sessionsOf(a).createSession({ sessionId: "nightly-target" });
      const created = await schedulesOf(a).createSchedule({
        scheduleId: "nightly",
        target: { case: "session", value: { sessionId: "nightly-target" } },
        cron: "0 3 * * *",
        timezone: "Europe/Berlin",
        input: text("nightly report"),
      });
      const next = created.schedule?.nextFireAtMs ?? 0n;
      expect(next).toBeGreaterThan(BigInt(Date.now()));
      expect(created.schedule?.upcomingMs).toHaveLength(5);
      await schedulesOf(b).runScheduleNow({ scheduleId: "nightly" });
      await turnsDone("nightly-target", 1);
      await waitFor(
        async () => {
          const { runs } = await schedulesOf(a).listScheduleRuns({ scheduleId: "nightly" });
          return runs.length === 1;
        },
        { what: "the nightly schedule's one run" },
      );
      const { schedule } = await schedulesOf(a).getSchedule({ scheduleId: "nightly" });
      expect(schedule?.nextFireAtMs).toBe(next);
      expect(await userTexts("nightly-target")).toEqual(["nightly report"]);
    });

    test("an agent target gets a new session, bound to the agent, per fire", async () => {
      await createClient(AgentService, a.transport).createAgent({
        agentId: "reporter",
        definition: { systemPrompt: "Write the report." },
      });
      const past = BigInt(Date.now() - 5_000);
      await schedulesOf(a).createSchedule({
        scheduleId: "per-fire",
        target: { case: "agent", value: { agentId: "reporter" } },
        atMs: past,
        input: text("agent report"),
      });
      const first = `sched-per-fire-${past}`;
      await turnsDone(first, 1);
      await schedulesOf(b).runScheduleNow({ scheduleId: "per-fire" });
      const runs = await waitFor(
        async () => {
          const page = await schedulesOf(a).listScheduleRuns({ scheduleId: "per-fire" });
          return page.runs.length === 2 ? page.runs : undefined;
        },
        { what: "the per-fire schedule's second run" },
      );
      const sessions = runs.map((r) => r.sessionId);
      expect(sessions[1]).toBe(first);
      expect(sessions[0]).toMatch(/^sched-per-fire-\d+$/u);
      expect(sessions[0]).not.toBe(first);
      await turnsDone(sessions[0] ?? "", 1);
      for (const sessionId of sessions) {
        expect(await userTexts(sessionId)).toEqual(["agent report"]);
        const { session } = await sessionsOf(a).getSession({ sessionId });
        expect(session?.agent).toMatchObject({ agentId: "reporter", version: 1n });
      }
    });

    test("a fire whose target session was deleted pauses the schedule with the reason", async () => {
      await sessionsOf(a).createSession({ sessionId: "gone-target" });
      await schedulesOf(a).createSchedule({
        scheduleId: "orphan",
        target: { case: "session", value: { sessionId: "gone-target" } },
        cron: "*/5 * * * *",
        timezone: "UTC",
        input: text("hello?"),
      });
      await sessionsOf(a).deleteSession({ sessionId: "gone-target" });
      await schedulesOf(b).runScheduleNow({ scheduleId: "orphan" });
      const paused = await waitFor(
        async () => {
          const { schedule } = await schedulesOf(a).getSchedule({ scheduleId: "orphan" });
          return schedule?.paused ? schedule : undefined;
        },
        { what: "the orphan schedule to pause itself" },
      );
      expect(paused.pausedReason).toBe("target session gone-target does not exist");
      expect(paused.upcomingMs).toEqual([]);
      const { runs } = await schedulesOf(a).listScheduleRuns({ scheduleId: "orphan" });
      expect(runs.map((r) => [r.sessionId, r.inputId, r.error])).toEqual([
        ["gone-target", "", "target session gone-target does not exist"],
      ]);
    });

    test("a one-off whose instant passes while paused is not fired by the unpause: it ends with a missed_while_paused run", async () => {
      await sessionsOf(a).createSession({ sessionId: "paused-target" });
      // Far enough ahead that the pause lands first even on a busy machine.
      const at = BigInt(Date.now() + 2_500);
      await schedulesOf(a).createSchedule({
        scheduleId: "paused-once",
        target: { case: "session", value: { sessionId: "paused-target" } },
        atMs: at,
        input: text("too late"),
      });
      const paused = await schedulesOf(b).pauseSchedule({ scheduleId: "paused-once" });
      expect(paused.schedule).toMatchObject({ paused: true, nextFireAtMs: at });
      await waitFor(async () => BigInt(Date.now()) > at + 200n, { what: "the instant to pass" });
      const resumed = await schedulesOf(a).unpauseSchedule({ scheduleId: "paused-once" });
      expect(resumed.schedule).toMatchObject({ paused: false, nextFireAtMs: 0n, upcomingMs: [] });
      // A one-off due now, created through each replica after the unpause: once both have
      // fired, the schedulers have polled since, and a late fire of the paused one would be in.
      const witnessed = BigInt(Date.now() - 1);
      for (const [name, replica] of [
        ["a", a],
        ["b", b],
      ] as const) {
        await sessionsOf(replica).createSession({ sessionId: `witness-target-${name}` });
        await schedulesOf(replica).createSchedule({
          scheduleId: `witness-${name}`,
          target: { case: "session", value: { sessionId: `witness-target-${name}` } },
          atMs: witnessed,
          input: text("witness"),
        });
      }
      for (const name of ["a", "b"]) {
        await waitFor(
          async () =>
            (await schedulesOf(b).listScheduleRuns({ scheduleId: `witness-${name}` })).runs
              .length === 1,
          { what: `the witness one-off created through replica ${name} to fire` },
        );
      }
      const { runs } = await schedulesOf(b).listScheduleRuns({ scheduleId: "paused-once" });
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({
        runId: `run-${at}`,
        scheduledAtMs: at,
        sessionId: "paused-target",
        inputId: "",
        error: "",
        skipReason: "missed_while_paused",
      });
      expect(await userTexts("paused-target")).toEqual([]);
      const { schedule } = await schedulesOf(b).getSchedule({ scheduleId: "paused-once" });
      expect(schedule).toMatchObject({ paused: false, nextFireAtMs: 0n, lastFireAtMs: 0n });
      // Pausing and unpausing again records nothing more.
      await schedulesOf(a).pauseSchedule({ scheduleId: "paused-once" });
      await schedulesOf(a).unpauseSchedule({ scheduleId: "paused-once" });
      const again = await schedulesOf(a).listScheduleRuns({ scheduleId: "paused-once" });
      expect(again.runs).toHaveLength(1);
    });

    test("typed errors: bad cron or time zone names the field; the same id is idempotent, another body ALREADY_EXISTS", async () => {
      const client = schedulesOf(a);
      await sessionsOf(a).createSession({ sessionId: "typed-target" });
      const body: CreateBody = {
        scheduleId: "typed",
        target: { case: "session", value: { sessionId: "typed-target" } },
        cron: "30 8 * * 1-5",
        timezone: "America/New_York",
        input: text("standup"),
        catchUp: CatchUp.NONE,
      };
      const refused = async (patch: Partial<CreateScheduleRequest>, field: string) => {
        const error = await expectCode(
          client.createSchedule({ ...body, ...patch } as CreateBody),
          Code.InvalidArgument,
        );
        expect(error.message).toContain(field);
      };
      await refused({ cron: "61 * * * *" }, "cron");
      await refused({ cron: "* * * * * *" }, "cron");
      await refused({ timezone: "Mars/Olympus" }, "timezone");
      await refused({ timezone: "" }, "timezone");
      await refused({ scheduleId: "has space" }, "schedule_id");
      await refused({ input: [] }, "input");
      const first = await client.createSchedule(body);
      expect(first.deduplicated).toBe(false);
      const again = await client.createSchedule(body);
      expect(again.deduplicated).toBe(true);
      expect(again.schedule).toEqual(first.schedule);
      await expectCode(
        client.createSchedule({ ...body, input: text("other") }),
        Code.AlreadyExists,
      );
      await expectCode(client.getSchedule({ scheduleId: "absent" }), Code.NotFound);
      await expectCode(
        client.createSchedule({
          ...body,
          scheduleId: "no-session",
          target: { case: "session", value: { sessionId: "never-created" } },
        }),
        Code.NotFound,
      );
    });

    test("grpc-js too: a bad time zone is INVALID_ARGUMENT naming timezone; a schedule is created and read back", async () => {
      const proto = protoLoader.loadSync("tether/v1/schedule_service.proto", {
        includeDirs: [new URL("../../../proto/", import.meta.url).pathname],
        longs: String,
        keepCase: true,
      });
      const v1 = (grpc.loadPackageDefinition(proto).tether as grpc.GrpcObject)
        .v1 as grpc.GrpcObject;
      const Ctor = v1.ScheduleService as grpc.ServiceClientConstructor;
      const client = new Ctor(`127.0.0.1:${b.server.port}`, grpc.credentials.createInsecure());
      const call = (method: string, request: object) =>
        new Promise<{
          error: grpc.ServiceError | null;
          reply: Record<string, unknown> | undefined;
        }>((resolve) => {
          (client as unknown as Record<string, (...args: unknown[]) => void>)[method]?.(
            request,
            (error: grpc.ServiceError | null, reply?: Record<string, unknown>) =>
              resolve({ error, reply }),
          );
        });
      await sessionsOf(a).createSession({ sessionId: "grpc-target" });
      const body = {
        schedule_id: "grpc-weekly",
        session: { session_id: "grpc-target" },
        cron: "0 9 * * 1",
        timezone: "Asia/Nowhere",
        input: [{ text: "weekly" }],
      };
      const refused = await call("CreateSchedule", body);
      expect(refused.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(refused.error?.details).toContain("timezone");
      const created = await call("CreateSchedule", { ...body, timezone: "Asia/Tokyo" });
      expect(created.error).toBeNull();
      const read = await call("GetSchedule", { schedule_id: "grpc-weekly" });
      client.close();
      const schedule = read.reply?.schedule as Record<string, unknown>;
      expect(schedule).toMatchObject({
        schedule_id: "grpc-weekly",
        timezone: "Asia/Tokyo",
        cron: "0 9 * * 1",
      });
      // Mondays 09:00 in Tokyo are Mondays 00:00 UTC.
      const upcoming = (schedule.upcoming_ms as string[]).map((ms) => new Date(Number(ms)));
      expect(upcoming).toHaveLength(5);
      for (const d of upcoming)
        expect([d.getUTCDay(), d.getUTCHours(), d.getUTCMinutes()]).toEqual([1, 0, 0]);
    });
  });
}
