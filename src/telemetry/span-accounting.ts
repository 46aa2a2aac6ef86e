// What became of every span the SDK recorded: sent, or dropped (an export the Collector refused
// or never answered, a full queue, or still waiting when the replica stopped). A counting
// processor sees each span end; a wrapper around the exporter sees each export's result. The
// difference at shutdown is what the bounded flush left behind (ADR 0031).
import { TraceFlags, type Context } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace";

export interface SpanAccounting {
  /** Sees every span end, ahead of the batching processor. */
  readonly counter: SpanProcessor;
  /** The exporter, its results counted. */
  readonly exporter: SpanExporter;
  /** Spans ended but neither sent nor reported failed: counted as dropped from now on. */
  settleUnsent(): number;
  /** Spans dropped so far. */
  dropped(): number;
}

/** `onDropped` hears every drop: failed exports as they fail, the unsent at settleUnsent(). */
export function createSpanAccounting(
  inner: SpanExporter,
  onDropped: (spans: number) => void,
): SpanAccounting {
  let ended = 0;
  let sent = 0;
  let dropped = 0;
  let settled = false;
  const drop = (spans: number): void => {
    if (spans <= 0) return;
    dropped += spans;
    onDropped(spans);
  };
  const counter: SpanProcessor = {
    onStart: (_span: Span, _context: Context) => undefined,
    onEnd(span: ReadableSpan) {
      // The batching processor keeps only sampled spans; the others were never to be sent.
      if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) ended += 1;
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      inner.export(spans, (result) => {
        // After the settlement every unanswered span was counted already.
        if (!settled) {
          if (result.code === ExportResultCode.SUCCESS) sent += spans.length;
          else drop(spans.length);
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
  return {
    counter,
    exporter,
    settleUnsent() {
      if (settled) return 0;
      settled = true;
      const unsent = ended - sent - dropped;
      drop(unsent);
      return Math.max(0, unsent);
    },
    dropped: () => dropped,
  };
}
