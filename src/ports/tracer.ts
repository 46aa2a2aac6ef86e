// The trace port: spans the runtime and the edge open, with no tracing SDK behind the interface.
// src/telemetry implements it with OpenTelemetry; when tracing is off there is no tracer at all
// (RuntimeDeps.tracer is undefined), so a turn pays one check, not a no-op SDK. A span's parent
// is always named (a span or a W3C traceparent): there is no ambient "active span", because an
// async context in Node 20 (AsyncLocalStorage) hooks every promise of the process, and that alone
// cost a streamed echo turn about a tenth of its throughput (docs/benchmarks.md, issue 39).

export type TraceSpanKind = "internal" | "server" | "client";

export type TraceValue = string | number | boolean | readonly string[];

/** Undefined values are left out (an optional attribute is not an empty one). */
export type TraceAttributes = Readonly<Record<string, TraceValue | undefined>>;

export interface TraceSpanOptions {
  kind: TraceSpanKind;
  attributes?: TraceAttributes;
  /**
   * The parent: a span of this tracer (a call under its turn), or a W3C `traceparent` (a turn run
   * by the session driver, a caller's header). Without it the span starts a new trace.
   */
  parent?: TraceSpan | string;
  /** Spans this one follows from (as W3C traceparents), e.g. a parked turn's earlier part. */
  links?: readonly string[];
}

export interface TraceSpan {
  /** This span as a W3C `traceparent`, to store where the async context does not go. */
  readonly traceparent: string;
  setAttributes(attributes: TraceAttributes): void;
  addEvent(name: string, attributes?: TraceAttributes): void;
  /** Links spans (W3C traceparents) learnt after the start, e.g. the submitters of steered input. */
  addLinks(traceparents: readonly string[]): void;
  /** Marks the span failed, with the error's type and message. */
  fail(error: unknown, type?: string): void;
  end(): void;
}

export interface Tracer {
  /** Record message contents (prompts, answers, tool arguments and results) on spans. */
  readonly captureContent: boolean;
  startSpan(name: string, options: TraceSpanOptions): TraceSpan;
}
