// Per-tenant turn metrics and the OpenTelemetry GenAI client metrics in Prometheus form
// (`gen_ai.client.token.usage` → gen_ai_client_token_usage, `gen_ai.client.operation.duration`
// → gen_ai_client_operation_duration_seconds). Every label value passes MetricLabels, so the
// series count is fixed by the configuration (ADR 0014).
import { Gauge, Histogram, Counter, type Registry } from "prom-client";
import type { ModelCallReport, QuotaRefusalPoint, TurnReport } from "../runtime/index.js";
import type { MetricLabels } from "./metric-labels.js";

/** The OpenTelemetry GenAI semantic conventions' advice: powers of 4 from 1 to 4^13 tokens. */
export const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** The same conventions' advice for model call durations, in seconds. */
export const MODEL_CALL_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** A turn spans model calls and tools: from a tenth of a second to half an hour. */
export const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320, 600, 1800];

export interface TenantMetrics {
  observeModelCall(report: ModelCallReport): void;
  observeTurn(report: TurnReport): void;
  /** A quota held a turn back (`admission`, the turn waits) or refused a submission. */
  countQuotaRefusal(tenant: string, limit: string, where: QuotaRefusalPoint): void;
  /** The sessions a sweep found with work due, counted by tenant (earlier counts cleared). */
  setReadySessions(sessionIds: readonly string[]): void;
}

export function createTenantMetrics(registry: Registry, labels: MetricLabels): TenantMetrics {
  const registers = [registry];
  const tokenUsage = new Histogram({
    name: "gen_ai_client_token_usage",
    help: "Tokens per model call (gen_ai.client.token.usage), by token type input or output",
    labelNames: ["tenant", "provider", "model", "token_type"] as const,
    buckets: TOKEN_BUCKETS,
    registers,
  });
  const callDuration = new Histogram({
    name: "gen_ai_client_operation_duration_seconds",
    help: "Seconds per model call (gen_ai.client.operation.duration); error_type when it failed",
    labelNames: ["tenant", "provider", "model", "error_type"] as const,
    buckets: MODEL_CALL_BUCKETS,
    registers,
  });
  const firstChunk = new Histogram({
    name: "tether_model_time_to_first_chunk_seconds",
    help: "Seconds from a model call's start to its first stream event",
    labelNames: ["tenant", "provider", "model"] as const,
    buckets: MODEL_CALL_BUCKETS,
    registers,
  });
  const turnDuration = new Histogram({
    name: "tether_turn_duration_seconds",
    help: "Seconds per run of a turn, by tenant and how the run ended (a resumed turn runs again)",
    labelNames: ["tenant", "end"] as const,
    buckets: TURN_BUCKETS,
    registers,
  });
  const outcomes = new Counter({
    name: "tether_tenant_turns_total",
    help: "Committed turns by tenant, outcome and reason",
    labelNames: ["tenant", "outcome", "reason"] as const,
    registers,
  });
  const parks = new Counter({
    name: "tether_turn_parks_total",
    help: "Turns parked on outside answers, by tenant",
    labelNames: ["tenant"] as const,
    registers,
  });
  const resumes = new Counter({
    name: "tether_turn_resumes_total",
    help: "Parked turns that went on, by tenant and why (answered, cancelled, expired)",
    labelNames: ["tenant", "status"] as const,
    registers,
  });
  const parked = new Gauge({
    name: "tether_parked_turns",
    help: "Turns parked here minus parked turns resumed here; summed over replicas: parked now",
    labelNames: ["tenant"] as const,
    registers,
  });
  const ready = new Gauge({
    name: "tether_tenant_queue_depth",
    help: "Sessions with work due, by tenant, as this replica's last sweep read them",
    labelNames: ["tenant"] as const,
    registers,
  });
  const quotaRefusals = new Counter({
    name: "tether_quota_refusals_total",
    help: "Quota refusals by tenant, limit and where: admission (the turn waits) or submission",
    labelNames: ["tenant", "limit", "where"] as const,
    registers,
  });
  return {
    countQuotaRefusal: (tenant, limit, where) =>
      quotaRefusals.inc({ tenant: labels.tenantNamed(tenant), limit, where }),
    observeModelCall(report) {
      const tenant = labels.tenantOf(report.sessionId);
      const base = { tenant, provider: report.provider, model: labels.modelOf(report.model) };
      if (report.errorType === undefined) {
        callDuration.observe(base, report.seconds);
        tokenUsage.observe({ ...base, token_type: "input" }, report.inputTokens);
        tokenUsage.observe({ ...base, token_type: "output" }, report.outputTokens);
      } else {
        callDuration.observe({ ...base, error_type: report.errorType }, report.seconds);
      }
      if (report.firstChunkSeconds !== undefined) {
        firstChunk.observe(base, report.firstChunkSeconds);
      }
    },
    observeTurn(report) {
      const tenant = labels.tenantOf(report.sessionId);
      if (report.kind === "resumed") {
        resumes.inc({ tenant, status: report.status });
        parked.dec({ tenant });
        return;
      }
      turnDuration.observe({ tenant, end: report.end }, report.seconds);
      if (report.outcome) {
        outcomes.inc({ tenant, outcome: report.outcome.kind, reason: report.outcome.reason });
      }
      if (report.end === "parked") {
        parks.inc({ tenant });
        parked.inc({ tenant });
      }
    },
    setReadySessions(sessionIds) {
      const counts = new Map<string, number>();
      for (const id of sessionIds) {
        const tenant = labels.tenantOf(id);
        counts.set(tenant, (counts.get(tenant) ?? 0) + 1);
      }
      ready.reset();
      for (const [tenant, count] of counts) ready.set({ tenant }, count);
    },
  };
}
