// WebhookService through the real server: endpoints are created with a server-generated whsec_
// secret shown once, read back without it, updated, deleted; bad input is INVALID_ARGUMENT naming
// the field; unknown endpoints are NOT_FOUND.
import { Code, createClient, type Client } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { routeWebhookService } from "../../../src/api/routes.js";
import { WebhookService } from "../../../src/gen/tether/v1/webhook_service_pb.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { ScheduleService } from "../../../src/gen/tether/v1/schedule_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { storeLimitsFor } from "../../../src/ports/runtime-store.js";
import { buildRuntime } from "../../../src/server/build-runtime.js";
import { buildStore, type BuiltStore } from "../../../src/server/build-store.js";
import { loadConfig } from "../../../src/server/config.js";
import { createLogger } from "../../../src/server/logger.js";
import { createMetrics } from "../../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../../src/server/server.js";
import { waitFor } from "../../support/wait-for.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

describe("WebhookService", () => {
  let server: ApiServerHarness | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  async function client(): Promise<Client<typeof WebhookService>> {
    const store = createMemoryStore();
    server = await startApiServer({
      store,
      routes: (router) => routeWebhookService(router, store.webhooks),
    });
    return createClient(WebhookService, server.transport);
  }

  it("creates an endpoint with a generated secret shown once, then reads, updates and deletes it", async () => {
    const api = await client();
    const created = await api.createWebhookEndpoint({
      endpointId: "ops",
      url: "https://hooks.example.com/tether",
      eventTypes: ["turn.completed", "session.action_required"],
    });
    expect(created.endpoint?.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/u);
    const got = await api.getWebhookEndpoint({ endpointId: "ops" });
    expect(got.endpoint).toMatchObject({
      endpointId: "ops",
      url: "https://hooks.example.com/tether",
      eventTypes: ["turn.completed", "session.action_required"],
      secret: "",
      disabled: false,
    });
    const updated = await api.updateWebhookEndpoint({
      endpointId: "ops",
      updateEventTypes: true,
      eventTypes: [],
      disabled: true,
    });
    expect(updated.endpoint).toMatchObject({
      eventTypes: [],
      disabled: true,
      disabledReason: "disabled by request",
    });
    expect((await api.listWebhookEndpoints({})).endpoints.map((e) => e.endpointId)).toEqual([
      "ops",
    ]);
    await expectCode(
      api.createWebhookEndpoint({ endpointId: "ops", url: "https://x.example.com/" }),
      Code.AlreadyExists,
    );
    await api.deleteWebhookEndpoint({ endpointId: "ops" });
    await expectCode(api.getWebhookEndpoint({ endpointId: "ops" }), Code.NotFound);
    await expectCode(api.deleteWebhookEndpoint({ endpointId: "ops" }), Code.NotFound);
  });

  it("refuses a non-http URL, an unknown event type and a malformed secret, naming the field", async () => {
    const api = await client();
    const url = await expectCode(
      api.createWebhookEndpoint({ endpointId: "a", url: "ftp://hooks.example.com/" }),
      Code.InvalidArgument,
    );
    expect(url.message).toContain("url");
    const type = await expectCode(
      api.createWebhookEndpoint({
        endpointId: "a",
        url: "https://hooks.example.com/",
        eventTypes: ["turn.exploded"],
      }),
      Code.InvalidArgument,
    );
    expect(type.message).toContain("event_types");
    const secret = await expectCode(
      api.createWebhookEndpoint({
        endpointId: "a",
        url: "https://hooks.example.com/",
        secret: "not-a-secret",
      }),
      Code.InvalidArgument,
    );
    expect(secret.message).toContain("secret");
    const given = await api.createWebhookEndpoint({
      endpointId: "b",
      url: "https://hooks.example.com/",
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    expect(given.endpoint?.secret).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    await expectCode(
      api.replayWebhookDelivery({ endpointId: "b", deliveryId: "nope" }),
      Code.InvalidArgument,
    );
    await expectCode(api.listWebhookDeliveries({ endpointId: "zzz" }), Code.NotFound);
  });
});

// The composition main.ts makes (buildStore, buildRuntime with webhooks on): a turn over gRPC is
// delivered to the tenant's endpoint, listed in its delivery log and replayed through the API;
// another tenant sees none of it.
describe("webhooks through the server's own wiring", () => {
  const KEYS = { acme: "key-acme-0123456789", globex: "key-globex-0123456789" };
  let built: BuiltStore | undefined;
  let wired: ReturnType<typeof buildRuntime> | undefined;
  let tether: TetherServer | undefined;
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    wired?.sweeper.stop();
    await wired?.scheduler.stop();
    await wired?.webhooks.deliverer?.stop();
    await tether?.close();
    await built?.close();
    await receiver?.close();
  });

  it("delivers a turn's completion, lists it and replays it with the same id, per tenant", async () => {
    const config = loadConfig({
      TETHER_PORT: "0",
      TETHER_METRICS_PORT: "0",
      TETHER_LOG_LEVEL: "silent",
      TETHER_API_KEYS: `${KEYS.acme}=acme,${KEYS.globex}=globex`,
      TETHER_WEBHOOK_ALLOW_PRIVATE: "true",
      TETHER_WEBHOOK_POLL_MS: "20",
    });
    const logger = createLogger({ level: "silent" });
    built = await buildStore(config.store, logger, storeLimitsFor(config.maxMessageBytes));
    const metrics = createMetrics({ defaultMetrics: false });
    wired = buildRuntime(config, built, logger, metrics);
    tether = await createTetherServer({
      config,
      store: built.store,
      logger,
      metrics,
      routes: wired.routes,
    });
    const as = (key: string) =>
      createGrpcTransport({
        baseUrl: `http://127.0.0.1:${tether?.port ?? 0}`,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${key}`);
            return next(req);
          },
        ],
      });
    const acme = createClient(WebhookService, as(KEYS.acme));
    const globex = createClient(WebhookService, as(KEYS.globex));
    const created = await acme.createWebhookEndpoint({
      endpointId: "ops",
      url: "http://127.0.0.1:1/",
    });
    receiver = await startWebhookReceiver(created.endpoint?.secret ?? "");
    await acme.updateWebhookEndpoint({ endpointId: "ops", url: receiver.url });
    await expectCode(globex.getWebhookEndpoint({ endpointId: "ops" }), Code.NotFound);

    const turns = createClient(TurnService, as(KEYS.acme));
    let turnId = "";
    for await (const r of turns.streamTurn({
      sessionId: "s1",
      input: [{ kind: { case: "text", value: "hello" } }],
    })) {
      turnId = r.event?.turnId ?? turnId;
    }
    const rcv = receiver;
    await waitFor(() => rcv.delivered.length === 1, { what: "the turn's delivery" });
    expect(rcv.delivered[0]?.body).toMatchObject({
      type: "turn.completed",
      data: { session_id: "s1", turn_id: turnId },
    });
    const log = await acme.listWebhookDeliveries({ endpointId: "ops" });
    expect(
      log.deliveries.map((d) => [d.eventId, d.eventType, d.sessionId, d.attempt, d.ok, d.status]),
    ).toEqual([[rcv.delivered[0]?.id, "turn.completed", "s1", 1, true, 204]]);
    const replay = await acme.replayWebhookDelivery({
      endpointId: "ops",
      deliveryId: log.deliveries[0]?.deliveryId ?? "",
    });
    expect(replay.queued).toBe(true);
    await waitFor(() => rcv.delivered.length === 2, { what: "the replayed delivery" });
    expect(rcv.delivered[1]?.id).toBe(rcv.delivered[0]?.id);
    expect(rcv.rejected).toBe(0);
  });

  it("delivers schedule.paused when a schedule's target is gone", async () => {
    const config = loadConfig({
      TETHER_PORT: "0",
      TETHER_METRICS_PORT: "0",
      TETHER_LOG_LEVEL: "silent",
      TETHER_WEBHOOK_ALLOW_PRIVATE: "true",
      TETHER_WEBHOOK_POLL_MS: "20",
    });
    const logger = createLogger({ level: "silent" });
    built = await buildStore(config.store, logger, storeLimitsFor(config.maxMessageBytes));
    const metrics = createMetrics({ defaultMetrics: false });
    wired = buildRuntime(config, built, logger, metrics);
    tether = await createTetherServer({
      ...{ config, store: built.store, logger, metrics },
      routes: wired.routes,
    });
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${tether.port}` });
    const hooks = createClient(WebhookService, transport);
    const created = await hooks.createWebhookEndpoint({
      endpointId: "ops",
      url: "http://127.0.0.1:1/",
      eventTypes: ["schedule.paused"],
    });
    receiver = await startWebhookReceiver(created.endpoint?.secret ?? "");
    await hooks.updateWebhookEndpoint({ endpointId: "ops", url: receiver.url });
    const sessions = createClient(SessionService, transport);
    const schedules = createClient(ScheduleService, transport);
    await sessions.createSession({ sessionId: "gone-target" });
    await schedules.createSchedule({
      scheduleId: "orphan",
      target: { case: "session", value: { sessionId: "gone-target" } },
      cron: "*/5 * * * *",
      timezone: "UTC",
      input: [{ kind: { case: "text", value: "hello?" } }],
    });
    await sessions.deleteSession({ sessionId: "gone-target" });
    await schedules.runScheduleNow({ scheduleId: "orphan" });
    const rcv = receiver;
    await waitFor(() => rcv.delivered.length === 1, { what: "the schedule.paused delivery" });
    expect(rcv.delivered[0]?.body).toMatchObject({
      type: "schedule.paused",
      data: { schedule_id: "orphan", reason: "target session gone-target does not exist" },
    });
    const { schedule } = await schedules.getSchedule({ scheduleId: "orphan" });
    expect(schedule?.paused).toBe(true);
    expect(rcv.rejected).toBe(0);
  });
});
