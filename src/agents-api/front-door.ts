// The OpenAI Agents API front door (ADR 0037): HTTP/1.1 and h2c requests under `/v1`, on the
// same port as gRPC and Connect (src/server/listeners.ts dispatches them here). Every request
// gets an `x-request-id`; the bearer key names the tenant exactly as for gRPC; a POST's body is
// read and parsed once; every failure leaves through the one error table (src/api/http-errors.ts)
// in OpenAI's error body.
import { randomUUID } from "node:crypto";
import { httpErrorOf } from "../api/http-errors.js";
import { createTenantScope } from "../api/tenancy.js";
import { TetherError } from "../domain/errors.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { Tracer } from "../ports/tracer.js";
import type { TetherRuntime } from "../runtime/index.js";
import type { ScheduleActions } from "../api/schedule-actions.js";
import { addAgentRoutes } from "./agent-routes.js";
import { addInvocationRoutes } from "./automation-invocations.js";
import { addAutomationRoutes } from "./automation-routes.js";
import { addEventRoutes, type AdmitInput } from "./event-routes.js";
import { type KeyedCreates } from "./idempotent-create.js";
import { addSessionRoutes } from "./session-routes.js";
import { addSessionStubRoutes } from "./session-stubs.js";
import { addTurnRoutes } from "./turn-routes.js";
import { startDoorSpan } from "./door-trace.js";
import { addSessionEventRoutes, type SessionEventSource } from "./session-events-route.js";
import {
  parseJsonBody,
  readBody,
  sendJson,
  type HttpRequest,
  type HttpResponse,
} from "./http-io.js";
import { createRouteTable, type Match } from "./route-table.js";

/** Where each answered request is counted (src/server/metrics.ts `observeHttp`). */
export interface FrontDoorMetrics {
  observeHttp(route: string, status: number, seconds: number): void;
}

/** The metric label of a request no route serves: the path itself would be unbounded. */
export const UNMATCHED_ROUTE = "unmatched";

export interface FrontDoorLog {
  error(record: Record<string, unknown>, message: string): void;
}

export interface FrontDoorOptions {
  store: RuntimeStore;
  /** The runtime sessions' turns run on; without it, creates with `input` and the event routes are refused. */
  runtime?: TetherRuntime | undefined;
  /** The tenant of an `authorization` header; throws `unauthenticated` (src/server/auth.ts). */
  tenantOf: (authorization: string | undefined) => string;
  /** The names of the operator-declared MCP servers. */
  mcpServers: readonly string[];
  /** The largest request body, in bytes. */
  maxBodyBytes: number;
  log: FrontDoorLog;
  /** The session event log and watch behind GET /v1/agents/sessions/{id}/events. */
  sessionEvents?: SessionEventSource | undefined;
  /** The schedule actions behind /v1/agents/automations (ScheduleService's own). */
  schedules?: ScheduleActions | undefined;
  /** Refuses a tenant's input (quota_exhausted: a 429) while a reject-mode quota is used up. */
  admitInput?: AdmitInput | undefined;
  /** Where creates' Idempotency-Keys are kept, and for how long. */
  idempotency: KeyedCreates;
  /** Counts every answered request by route and status, timed to its last byte (SSE: its end). */
  metrics?: FrontDoorMetrics | undefined;
  /** A SERVER span per request, continuing the caller's traceparent (tracing on). */
  tracer?: Tracer | undefined;
}

export type FrontDoor = (req: HttpRequest, res: HttpResponse) => void;

export function createFrontDoor(options: FrontDoorOptions): FrontDoor {
  const routes = createRouteTable();
  const mcpServers = new Set(options.mcpServers);
  const { runtime, store, admitInput } = options;
  const keys = options.idempotency;
  addAgentRoutes(routes, { store, mcpServers, keys });
  addSessionRoutes(routes, {
    store,
    runtime,
    mcpServers,
    keys,
    events: options.sessionEvents,
    admitInput,
  });
  addSessionStubRoutes(routes, store);
  addTurnRoutes(routes, store);
  if (runtime) addEventRoutes(routes, { runtime, store, admitInput });
  if (options.sessionEvents) addSessionEventRoutes(routes, options.sessionEvents);
  if (options.schedules) {
    const automations = { actions: options.schedules, store: options.store, mcpServers, keys };
    addAutomationRoutes(routes, automations);
    addInvocationRoutes(routes, automations);
  }

  const serve = async (req: HttpRequest, res: HttpResponse, requestId: string) => {
    const started = process.hrtime.bigint();
    let tenant: string | undefined;
    let route = UNMATCHED_ROUTE;
    let status: number;
    let failure: unknown;
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const match = routes.find(method, url);
    if (match) route = match.pattern;
    const span = startDoorSpan(options.tracer, {
      method,
      path: url.split("?")[0] ?? url,
      route: match?.path,
      traceparent: header(req, "traceparent"),
    });
    try {
      tenant = options.tenantOf(header(req, "authorization"));
      if (!match) throw noRoute(method, url);
      const reply = await answer(match, req, tenant, options.maxBodyBytes, span.traceparent);
      if (reply.stream) {
        status = 200;
        await reply.stream(res, { "x-request-id": requestId });
      } else {
        status = reply.status;
        sendJson(res, reply.status, reply.body, { "x-request-id": requestId });
      }
    } catch (error) {
      const answered = httpErrorOf(error, tenant);
      if (answered.status === 500)
        options.log.error({ err: error, requestId }, "front door failed");
      status = answered.status;
      failure = error;
      sendJson(res, answered.status, answered.body, {
        ...answered.headers,
        "x-request-id": requestId,
      });
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    options.metrics?.observeHttp(route, status, seconds);
    span.end(status, failure);
  };

  return (req, res) => {
    const requestId = `req_${randomUUID().replaceAll("-", "")}`;
    // Writing the answer can itself fail (the client left mid-write): never an unhandled rejection.
    serve(req, res, requestId).catch((error: unknown) => {
      options.log.error({ err: error, requestId }, "front door could not answer");
    });
  };
}

async function answer(
  match: Match,
  req: HttpRequest,
  tenant: string,
  maxBodyBytes: number,
  trace: string | undefined,
) {
  const body = req.method === "POST" ? parseJsonBody(await readBody(req, maxBodyBytes)) : undefined;
  return match.route({
    scope: createTenantScope(tenant),
    params: match.params,
    query: match.query,
    headers: req.headers,
    body,
    header: (name) => header(req, name),
    trace,
  });
}

function header(req: HttpRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** An unknown path (or a method its path does not take): 404 in OpenAI's error body. */
function noRoute(method: string, url: string): TetherError {
  const path = url.split("?")[0] ?? url;
  return new TetherError("route_not_found", `no route for ${method} ${path}`);
}
