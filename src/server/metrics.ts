// Prometheus metrics on their own HTTP port, so scraping never competes with RPC traffic and
// stays reachable without API keys. The Metrics interface is what the rest of the process
// updates; prom-client stays behind it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { observeStream } from "../api/observed-stream.js";
import { createMetricLabels, type MetricLabels } from "./metric-labels.js";
import { createTenantMetrics, type TenantMetrics } from "./tenant-metrics.js";

export interface Metrics {
  /** One finished RPC: "tether.v1.SessionService/GetSession", its gRPC code name, seconds. */
  observeRpc(method: string, code: string, seconds: number): void;
  /** One answered front-door request: its route pattern (or "unmatched"), HTTP status, seconds. */
  observeHttp(route: string, status: number, seconds: number): void;
  /** A turn reached a terminal outcome ("finished", "stopped", "failed"). */
  countTurn(outcome: string): void;
  /** A lease claim decided ("acquired", "reentered", "busy", "reclaimed", "expired"). */
  countLeaseClaim(outcome: string): void;
  /** Work waiting across the sessions this replica watches ("queued_work", "turn_input"). */
  setQueueDepth(kind: string, depth: number): void;
  /** Tokens a provider reported ("input", "output", "cache_read", "cache_write", "reasoning"). */
  addProviderTokens(provider: string, kind: string, tokens: number): void;
  /** A committed turn compacted its session's context ("summarize", ...). */
  countCompaction(mode: string): void;
  /** Spans that never reached the Collector (a failed export, a full queue, a cut flush). */
  countDroppedSpans(spans: number): void;
  readonly registry: Registry;
}

export interface MetricsOptions {
  defaultMetrics?: boolean;
  /** Which tenants and models have series of their own (only "default" otherwise). */
  labels?: MetricLabels;
}

export function createMetrics(options: MetricsOptions = {}): Metrics & TenantMetrics {
  const registry = new Registry();
  const tenantMetrics = createTenantMetrics(registry, options.labels ?? createMetricLabels());
  if (options.defaultMetrics ?? true)
    collectDefaultMetrics({ register: registry, prefix: "tether_" });
  const rpcs = requestSeries(registry, {
    total: "tether_rpc_total",
    duration: "tether_rpc_duration_seconds",
    what: "RPCs handled, by method and gRPC code",
    timed: "RPC handling time until the response (unary) or the stream's end",
    labels: ["method", "code"],
  });
  const doorRequests = requestSeries(registry, {
    total: "tether_http_requests_total",
    duration: "tether_http_request_duration_seconds",
    what: "Front door (OpenAI Agents API) requests, by route pattern and HTTP status",
    timed: "Front door handling time until the answer's last byte (an SSE stream: its end)",
    labels: ["route", "status"],
  });
  const turns = new Counter({
    name: "tether_turns_total",
    help: "Turns by terminal outcome",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const leaseClaims = new Counter({
    name: "tether_lease_claims_total",
    help: "Session execution lease claims by outcome",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const queueDepth = new Gauge({
    name: "tether_queue_depth",
    help: "Queued work and pending turn input waiting",
    labelNames: ["kind"] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: "tether_provider_tokens_total",
    help: "Tokens reported by model providers",
    labelNames: ["provider", "kind"] as const,
    registers: [registry],
  });
  const compactions = new Counter({
    name: "tether_compactions_total",
    help: "Compactions committed with turns, by mode",
    labelNames: ["mode"] as const,
    registers: [registry],
  });
  const droppedSpans = new Counter({
    name: "tether_trace_spans_dropped_total",
    help: "Spans not sent to the Collector: exports that failed, a full queue, a flush cut at shutdown",
    registers: [registry],
  });
  return {
    registry,
    ...tenantMetrics,
    observeRpc: (method, code, seconds) => rpcs.observe({ method, code }, seconds),
    observeHttp: (route, status, seconds) =>
      doorRequests.observe({ route, status: String(status) }, seconds),
    countTurn: (outcome) => turns.inc({ outcome }),
    countLeaseClaim: (outcome) => leaseClaims.inc({ outcome }),
    setQueueDepth: (kind, depth) => queueDepth.set({ kind }, depth),
    addProviderTokens: (provider, kind, n) => tokens.inc({ provider, kind }, n),
    countCompaction: (mode) => compactions.inc({ mode }),
    countDroppedSpans: (spans) => droppedSpans.inc(spans),
  };
}

const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A request counter and its latency histogram, on the same labels, updated together. */
function requestSeries<L extends string>(
  registry: Registry,
  names: { total: string; duration: string; what: string; timed: string; labels: L[] },
) {
  const total = new Counter({
    name: names.total,
    help: names.what,
    labelNames: names.labels,
    registers: [registry],
  });
  const latency = new Histogram({
    name: names.duration,
    help: names.timed,
    labelNames: names.labels,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return {
    observe(labels: Record<L, string>, seconds: number) {
      total.inc(labels);
      latency.observe(labels, seconds);
    },
  };
}

function codeName(error: unknown): string {
  const code = error instanceof ConnectError ? error.code : Code.Internal;
  return Code[code] ?? "Unknown";
}

/** Outermost interceptor: it sees the final code, including auth and edge-mapped errors. */
export function createMetricsInterceptor(metrics: Metrics): Interceptor {
  return (next) => async (req) => {
    const method = `${req.service.typeName}/${req.method.name}`;
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const res = await next(req);
      if (!res.stream) {
        metrics.observeRpc(method, "OK", elapsed());
        return res;
      }
      return {
        ...res,
        message: observeStream(res.message, {
          end: () => metrics.observeRpc(method, "OK", elapsed()),
          fail: (error) => {
            metrics.observeRpc(method, codeName(error), elapsed());
            return error;
          },
        }),
      };
    } catch (error) {
      metrics.observeRpc(method, codeName(error), elapsed());
      throw error;
    }
  };
}

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/** Serves GET /metrics on host:port (port 0 picks a free one). */
export async function startMetricsListener(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
