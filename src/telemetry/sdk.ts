// The OpenTelemetry SDK behind the Tracer port: a tracer provider with a batching processor and
// an OTLP/HTTP exporter (protobuf or JSON) and a sampler from OTEL_TRACES_SAMPLER. Parents are
// passed explicitly (the port has no active span), so no context manager hooks the process's
// promises. Nothing is registered globally: each instance is separate, so two replicas in one
// process (the tests) keep their traces apart. Only
// src/telemetry/index.ts loads this module, and only when tracing is on.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
} from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type {
  TraceAttributes,
  TraceSpan,
  TraceSpanKind,
  TraceSpanOptions,
  Tracer,
} from "../ports/tracer.js";
import type { SamplerConfig, TracingConfig } from "./config.js";
import { createSpanAccounting } from "./span-accounting.js";

/** The semantic-conventions release Tether's span names and attributes follow (ADR 0013). */
export const SEMCONV_SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0";

export interface SdkTelemetryOptions {
  /** service.instance.id: this replica (the lease owner id). */
  instanceId?: string;
  /** Hears every span dropped: an export that failed, a full queue, a flush cut at shutdown. */
  onDroppedSpans?: (spans: number) => void;
}

/** How the last flush went: spans dropped over the process's life, those cut at shutdown too. */
export interface TelemetryShutdownReport {
  /** The last spans were sent (or failed) before the shutdown timeout. */
  flushedInTime: boolean;
  dropped: number;
}

export interface SdkTelemetry {
  tracer: Tracer;
  flush(): Promise<void>;
  shutdown(): Promise<TelemetryShutdownReport>;
}

/** Resolves true when `work` settles within `ms`, false when the time runs out first. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const KINDS: Record<TraceSpanKind, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
};

function samplerOf(config: SamplerConfig): Sampler {
  switch (config.kind) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(config.ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) });
  }
}

/**
 * The port's attributes as the SDK takes them, not copied: the SDK this version pins copies and
 * validates every attribute map it is given (cleanAttributes, maybeAddAttribute) and leaves out
 * undefined values itself, so a copy here would only be a second allocation per call.
 */
const attributesOf = (attributes: TraceAttributes | undefined): Attributes | undefined =>
  attributes as Attributes | undefined;

class SdkSpan implements TraceSpan {
  #traceparent: string | undefined;

  constructor(readonly span: Span) {}

  /** Built once: a span's context does not change. */
  get traceparent(): string {
    if (this.#traceparent === undefined) {
      const { traceId, spanId, traceFlags } = this.span.spanContext();
      this.#traceparent = `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, "0")}`;
    }
    return this.#traceparent;
  }

  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(attributesOf(attributes) ?? {});
  }

  addEvent(name: string, attributes?: TraceAttributes): void {
    this.span.addEvent(name, attributesOf(attributes));
  }

  addLinks(traceparents: readonly string[]): void {
    const links = linksOf(traceparents);
    if (links !== undefined && links.length > 0) this.span.addLinks(links);
  }

  fail(error: unknown, type?: string): void {
    const message = error instanceof Error ? error.message : String(error);
    const errorType = type ?? (error instanceof Error ? error.name : "error");
    this.span.setAttribute("error.type", errorType);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

/**
 * The context a span starts in: under a span of this tracer, under a W3C traceparent (its remote
 * parent; the root context if it is malformed), or the root of a new trace.
 */
function contextOf(parent: TraceSpan | string | undefined): Context {
  if (parent === undefined) return ROOT_CONTEXT;
  if (parent instanceof SdkSpan) return trace.setSpan(ROOT_CONTEXT, parent.span);
  if (typeof parent !== "string") return ROOT_CONTEXT;
  const remote = parseTraceParent(parent);
  return remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
}

function linksOf(traceparents: readonly string[] | undefined): Link[] | undefined {
  if (traceparents === undefined) return undefined;
  return traceparents.flatMap((t) => {
    const context = parseTraceParent(t);
    return context ? [{ context }] : [];
  });
}

export function startSdkTelemetry(
  config: TracingConfig,
  options: SdkTelemetryOptions = {},
): SdkTelemetry {
  const Exporter = config.protocol === "http/json" ? OtlpJsonExporter : OtlpProtoExporter;
  const accounting = createSpanAccounting(
    new Exporter({ url: config.tracesUrl }),
    options.onDroppedSpans ?? (() => undefined),
  );
  const { batch } = config;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName,
      ...(options.instanceId !== undefined && { "service.instance.id": options.instanceId }),
    }),
    sampler: samplerOf(config.sampler),
    spanProcessors: [
      accounting.counter,
      new BatchSpanProcessor({
        exporter: accounting.exporter,
        scheduledDelayMillis: batch.scheduledDelayMs,
        maxQueueSize: batch.maxQueueSize,
        maxExportBatchSize: batch.maxExportBatchSize,
        exportTimeoutMillis: batch.exportTimeoutMs,
      }),
    ],
  });
  const otel = provider.getTracer("tether", undefined, { schemaUrl: SEMCONV_SCHEMA_URL });

  const tracer: Tracer = {
    captureContent: config.captureContent,
    startSpan(name: string, spanOptions: TraceSpanOptions): TraceSpan {
      const options: SpanOptions = { kind: KINDS[spanOptions.kind] };
      if (spanOptions.attributes !== undefined)
        options.attributes = attributesOf(spanOptions.attributes);
      if (spanOptions.links !== undefined) options.links = linksOf(spanOptions.links);
      return new SdkSpan(otel.startSpan(name, options, contextOf(spanOptions.parent)));
    },
  };
  return {
    tracer,
    flush: () => provider.forceFlush(),
    async shutdown() {
      // A Collector that hangs or refuses would hold the exit for the exporter's own timeout and
      // retries (8-10 s): past the close margin. What is not sent in time is dropped, counted.
      const flushedInTime = await within(provider.shutdown(), config.shutdownTimeoutMs);
      accounting.settleUnsent();
      return { flushedInTime, dropped: accounting.dropped() };
    },
  };
}
