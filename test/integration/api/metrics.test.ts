// /metrics of a running server (the composition main.ts makes: configured labels, the runtime
// reporting into the server's registry) after a turn over gRPC: per-tenant turn series and the
// GenAI model call series are there with the tenant of the caller's API key, and every metric the
// Grafana dashboard queries is one the server declares.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { storeLimitsFor } from "../../../src/ports/runtime-store.js";
import { buildRuntime } from "../../../src/server/build-runtime.js";
import { buildStore, type BuiltStore } from "../../../src/server/build-store.js";
import { loadConfig } from "../../../src/server/config.js";
import { createLogger } from "../../../src/server/logger.js";
import { metricLabelsOf } from "../../../src/server/metric-labels.js";
import { createMetrics } from "../../../src/server/metrics.js";
import { createTetherServer, type TetherServer } from "../../../src/server/server.js";
import type { Sweeper } from "../../../src/runtime/index.js";
import { freePort } from "../../support/redis-harness.js";
import { declaredMetrics, parseExposition, scraped } from "../../support/metric-values.js";
import { dashboardQueries, familyOf, metricNamesOf } from "../../support/promql-names.js";

const KEY = "key-acme-0123456789";
let server: TetherServer;
let sweeper: Sweeper;
let built: BuiltStore;
let body = "";
const doorStatuses: number[] = [];

beforeAll(async () => {
  const config = loadConfig({
    TETHER_PORT: "0",
    TETHER_METRICS_PORT: String(await freePort()),
    TETHER_LOG_LEVEL: "silent",
    TETHER_API_KEYS: `${KEY}=acme`,
    TETHER_METRICS_TENANTS: "beta",
  });
  const logger = createLogger({ level: "silent" });
  built = await buildStore(config.store, logger, storeLimitsFor(config.maxMessageBytes));
  const metrics = createMetrics({ labels: metricLabelsOf(config) });
  const runtime = buildRuntime(config, built, logger, metrics);
  sweeper = runtime.sweeper;
  server = await createTetherServer({
    config,
    store: built.store,
    logger,
    metrics,
    routes: runtime.routes,
  });
  const transport = createGrpcTransport({
    baseUrl: `http://127.0.0.1:${server.port}`,
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${KEY}`);
        return next(req);
      },
    ],
  });
  const turns = createClient(TurnService, transport);
  const events: string[] = [];
  for await (const r of turns.streamTurn({
    sessionId: "s1",
    input: [{ kind: { case: "text", value: "hello" } }],
  })) {
    events.push(r.event?.event.case ?? "");
  }
  expect(events.at(-1)).toBe("turnCompleted");
  // The front door on the same port: a create, a missing session, a path no route serves.
  const door = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${server.port}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    });
  const created = await door("/v1/agents", { method: "POST", body: '{"model":"echo"}' });
  doorStatuses.push(created.status);
  doorStatuses.push((await door("/v1/agents/sessions/sess_missing")).status);
  doorStatuses.push((await door("/v1/no/such/route")).status);
  body = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
});

afterAll(async () => {
  sweeper.stop();
  await server.close();
  await built.close();
});

describe("/metrics after a turn", () => {
  it("counts the turn and its model call under the caller's tenant", () => {
    const samples = parseExposition(body);
    const call = { tenant: "acme", provider: "echo", model: "echo" };
    // The echo model counts characters as tokens: "hello" in, "hello" out.
    const input = { ...call, token_type: "input" };
    expect(scraped(samples, "gen_ai_client_token_usage_count", input)).toBe(1);
    expect(scraped(samples, "gen_ai_client_token_usage_sum", input)).toBe(5);
    expect(scraped(samples, "gen_ai_client_token_usage_bucket", { ...input, le: "4" })).toBe(0);
    expect(scraped(samples, "gen_ai_client_token_usage_bucket", { ...input, le: "16" })).toBe(1);
    expect(scraped(samples, "gen_ai_client_operation_duration_seconds_count", call)).toBe(1);
    expect(scraped(samples, "tether_model_time_to_first_chunk_seconds_count", call)).toBe(1);
    expect(
      scraped(samples, "tether_tenant_turns_total", {
        tenant: "acme",
        outcome: "finished",
        reason: "assistant_message",
      }),
    ).toBe(1);
    expect(
      scraped(samples, "tether_turn_duration_seconds_count", { tenant: "acme", end: "finished" }),
    ).toBe(1);
    expect(scraped(samples, "tether_turns_total", { outcome: "finished" })).toBe(1);
    expect(scraped(samples, "tether_lease_claims_total", { outcome: "acquired" })).toBe(1);
    expect(
      scraped(samples, "tether_rpc_total", {
        method: "tether.v1.TurnService/StreamTurn",
        code: "OK",
      }),
    ).toBe(1);
    // Only configured tenants and models, plus "other", ever appear as label values.
    const tenants = new Set(samples.flatMap((s) => (s.labels.tenant ? [s.labels.tenant] : [])));
    expect([...tenants]).toEqual(["acme"]);
  });

  it("counts front door requests by route pattern and status, never by raw path", () => {
    expect(doorStatuses).toEqual([200, 404, 404]);
    const samples = parseExposition(body);
    const count = (route: string, status: string) =>
      scraped(samples, "tether_http_requests_total", { route, status });
    expect(count("POST /v1/agents", "200")).toBe(1);
    expect(count("GET /v1/agents/sessions/:session_id", "404")).toBe(1);
    expect(count("unmatched", "404")).toBe(1);
    expect(
      scraped(samples, "tether_http_request_duration_seconds_count", {
        route: "POST /v1/agents",
        status: "200",
      }),
    ).toBe(1);
    const routes = samples.flatMap((s) => (s.labels.route ? [s.labels.route] : []));
    expect(routes.filter((r) => r.includes("sess_missing") || r.includes("no/such"))).toEqual([]);
  });

  it("declares every metric the Grafana dashboard queries", () => {
    const file = join(import.meta.dirname, "../../../helm/tether/dashboards/tether.json");
    const queries = dashboardQueries(JSON.parse(readFileSync(file, "utf8")) as object);
    const names = new Set(queries.flatMap(metricNamesOf).map(familyOf));
    // The lexer finds what the panels promise (a broken lexer finding nothing would pass below).
    expect([...names].sort()).toEqual([
      "gen_ai_client_operation_duration_seconds",
      "gen_ai_client_token_usage",
      "tether_lease_claims_total",
      "tether_model_time_to_first_chunk_seconds",
      "tether_parked_turns",
      "tether_queue_depth",
      "tether_quota_refusals_total",
      "tether_rpc_duration_seconds",
      "tether_rpc_total",
      "tether_tenant_queue_depth",
      "tether_tenant_turns_total",
      "tether_turn_duration_seconds",
      "tether_turn_parks_total",
      "tether_turn_resumes_total",
    ]);
    const declared = declaredMetrics(body);
    expect([...names].filter((n) => !declared.has(n))).toEqual([]);
  });
});
