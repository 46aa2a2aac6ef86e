// The front door's span: one SERVER span per HTTP request (ADR 0013 and 0037), continued from the
// caller's W3C `traceparent` header, named `{method} {route}` as the HTTP semantic conventions
// name server spans. Its traceparent rides on the Call, so input the request submits is stored
// with it and the turn that runs that input hangs under the request, as under a gRPC call. An
// SSE answer's span ends with the stream.
import type { TraceSpan, Tracer } from "../ports/tracer.js";

export interface DoorSpan {
  /** The request's span as a W3C traceparent; undefined when tracing is off. */
  readonly traceparent: string | undefined;
  /** Ends the span with the answer's status; a 5xx marks it failed, as the conventions say. */
  end(status: number, error?: unknown): void;
}

const UNTRACED: DoorSpan = { traceparent: undefined, end: () => undefined };

export interface DoorRequestLine {
  method: string;
  /** The path without its query. */
  path: string;
  /** The matched route's path pattern (`/v1/agents/sessions/:session_id`), if any matched. */
  route: string | undefined;
  traceparent: string | undefined;
}

export function startDoorSpan(tracer: Tracer | undefined, line: DoorRequestLine): DoorSpan {
  if (!tracer) return UNTRACED;
  const span: TraceSpan = tracer.startSpan(
    line.route === undefined ? line.method : `${line.method} ${line.route}`,
    {
      kind: "server",
      ...(line.traceparent !== undefined && { parent: line.traceparent }),
      attributes: {
        "http.request.method": line.method,
        "http.route": line.route,
        "url.path": line.path,
      },
    },
  );
  return {
    traceparent: span.traceparent,
    end(status, error) {
      span.setAttributes({ "http.response.status_code": status });
      if (status >= 500) span.fail(error ?? new Error(`HTTP ${status}`), String(status));
      span.end();
    },
  };
}
