// Operator-declared webhook endpoints (TETHER_WEBHOOK_ENDPOINTS, ADR 0021) through the
// composition main.ts makes, on Redis: the endpoint is in the store before the server serves, a
// turn's completion reaches the configured receiver signed with the secret from the variable the
// entry names, and a later start with a changed URL and secret moves the endpoint.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { WebhookService } from "../../../src/gen/tether/v1/webhook_service_pb.js";
import { storeLimitsFor } from "../../../src/ports/runtime-store.js";
import { buildRuntime } from "../../../src/server/build-runtime.js";
import { buildStore, type BuiltStore } from "../../../src/server/build-store.js";
import { loadConfig } from "../../../src/server/config.js";
import { createLogger } from "../../../src/server/logger.js";
import { createMetrics } from "../../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../../src/server/server.js";
import { applyDeclaredEndpoints } from "../../../src/server/webhook-endpoints.js";
import { startRedis, type RedisProcess } from "../../support/redis-harness.js";
import { waitFor } from "../../support/wait-for.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.js";

const SECRET_A = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const SECRET_B = `whsec_${Buffer.alloc(48, 9).toString("base64")}`;

interface Started {
  built: BuiltStore;
  wired: ReturnType<typeof buildRuntime>;
  tether: TetherServer;
}

describe("webhook endpoints from TETHER_WEBHOOK_ENDPOINTS", () => {
  let redis: RedisProcess;
  const receivers: WebhookReceiver[] = [];
  let started: Started | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });
  async function stop() {
    if (!started) return;
    started.wired.sweeper.stop();
    await started.wired.scheduler.stop();
    await started.wired.webhooks.deliverer?.stop();
    await started.tether.close();
    await started.built.close();
    started = undefined;
  }
  afterEach(async () => {
    await stop();
    for (const r of receivers.splice(0)) await r.close();
  });

  // What main.ts does, in its order: config, store, runtime, declared endpoints, then serving.
  async function start(url: string, secret: string): Promise<Started> {
    const config = loadConfig({
      TETHER_PORT: "0",
      TETHER_METRICS_PORT: "0",
      TETHER_LOG_LEVEL: "silent",
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      TETHER_WEBHOOK_ALLOW_PRIVATE: "true",
      TETHER_WEBHOOK_POLL_MS: "20",
      TETHER_WEBHOOK_ENDPOINTS: JSON.stringify([
        {
          tenant: "default",
          endpoint_id: "ops",
          url,
          event_types: ["turn.completed"],
          secret_env: "OPS_HOOK_SECRET",
        },
      ]),
      OPS_HOOK_SECRET: secret,
    });
    const logger = createLogger({ level: "silent" });
    const built = await buildStore(config.store, logger, storeLimitsFor(config.maxMessageBytes));
    const metrics = createMetrics({ defaultMetrics: false });
    const wired = buildRuntime(config, built, logger, metrics);
    const declared = await applyDeclaredEndpoints(
      built.webhooks,
      config.webhooks.endpoints,
      logger,
    );
    await declared.applied;
    const tether = await createTetherServer({
      ...{ config, store: built.store, logger, metrics },
      routes: wired.routes,
    });
    started = { built, wired, tether };
    return started;
  }

  async function runTurn(tether: TetherServer, sessionId: string): Promise<string> {
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${tether.port}` });
    const turns = createClient(TurnService, transport);
    let turnId = "";
    for await (const r of turns.streamTurn({
      sessionId,
      input: [{ kind: { case: "text", value: "hello" } }],
    })) {
      turnId = r.event?.turnId ?? turnId;
    }
    return turnId;
  }

  it("delivers to the configured receiver with the configured secret; a later start moves it", async () => {
    const first = await startWebhookReceiver(SECRET_A);
    const second = await startWebhookReceiver(SECRET_B);
    receivers.push(first, second);

    const one = await start(first.url, SECRET_A);
    const hooks = createClient(
      WebhookService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${one.tether.port}` }),
    );
    const listed = await hooks.listWebhookEndpoints({});
    expect(listed.endpoints.map((e) => [e.endpointId, e.url, e.eventTypes, e.secret])).toEqual([
      ["ops", first.url, ["turn.completed"], ""],
    ]);
    const turnA = await runTurn(one.tether, "s1");
    await waitFor(() => first.delivered.length === 1, { what: "the first receiver's delivery" });
    expect(first.delivered[0]?.body).toMatchObject({
      type: "turn.completed",
      data: { session_id: "s1", turn_id: turnA },
    });
    expect(first.rejected).toBe(0);
    await stop();

    const two = await start(second.url, SECRET_B);
    const after = await createClient(
      WebhookService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${two.tether.port}` }),
    ).listWebhookEndpoints({});
    expect(after.endpoints.map((e) => [e.endpointId, e.url, e.disabled])).toEqual([
      ["ops", second.url, false],
    ]);
    expect(after.endpoints[0]?.createdAtMs).toBe(listed.endpoints[0]?.createdAtMs);
    const turnB = await runTurn(two.tether, "s2");
    await waitFor(() => second.delivered.length === 1, { what: "the second receiver's delivery" });
    expect(second.delivered[0]?.body).toMatchObject({
      type: "turn.completed",
      data: { session_id: "s2", turn_id: turnB },
    });
    expect(second.rejected).toBe(0);
    expect(first.requests).toHaveLength(1);
  });
});
