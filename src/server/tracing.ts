// The RPC's span: a SERVER span per call, continued from the caller's W3C `traceparent` header
// (or the root of a new trace), handed to the handler in the call's context values, so input a
// call submits carries it to its turn. A server stream's span ends with the stream. Outermost
// interceptor: it sees the final status of every call.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { rpcSpanKey } from "../api/rpc-trace.js";
import type { TraceAttributes, TraceSpan, Tracer } from "../ports/tracer.js";

/** rpc.system by the request's content type (semconv: gRPC and gRPC-Web are "grpc"). */
function rpcSystemOf(contentType: string | null): string {
  return contentType?.startsWith("application/grpc") ? "grpc" : "connect_rpc";
}

/** A successful call's status: one object for every call (the SDK copies what it is given). */
const STATUS_OK = { "rpc.grpc.status_code": 0 } as const;

/** Ends the span with the call's gRPC status code (0 is OK, which Connect's Code leaves out). */
function settle(span: TraceSpan, error?: unknown): void {
  if (error === undefined) {
    span.setAttributes(STATUS_OK);
  } else {
    const code = ConnectError.from(error).code;
    span.setAttributes({ "rpc.grpc.status_code": code });
    span.fail(error, Code[code]);
  }
  span.end();
}

/**
 * The stream's messages, passed through one by one; the span ends when the stream does (done,
 * failed, or left early by the client, whose return() closes the inner stream first). A plain
 * iterator rather than an async generator: a generator adds its own promise and resumption to
 * every message a turn streams, which showed in the traced server's profile (issue 39).
 */
function endedWith<T>(span: TraceSpan, messages: AsyncIterable<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const it = messages[Symbol.asyncIterator]();
      let ended = false;
      const end = (failure?: unknown): void => {
        if (ended) return;
        ended = true;
        settle(span, failure);
      };
      let closing: Promise<void> | undefined;
      /** Closes the inner stream (as a generator's finally would), then ends the span; once. */
      const closeAndEnd = (failure?: unknown): Promise<void> =>
        (closing ??= (async () => {
          try {
            await it.return?.();
          } finally {
            end(failure);
          }
        })());
      const done = (): IteratorResult<T> => ({ done: true, value: undefined });
      return {
        next: () => {
          if (ended) return Promise.resolve(done());
          // One promise per message, as the inner stream's own: only the last step waits more.
          return it.next().then(
            (step) => (step.done === true ? closeAndEnd().then(() => step) : step),
            (error: unknown) =>
              closeAndEnd(error).then(() => {
                throw error;
              }),
          );
        },
        return: async () => {
          await closeAndEnd();
          return done();
        },
        throw: async (error: unknown) => {
          await closeAndEnd(error);
          throw error;
        },
      };
    },
  };
}

/**
 * Health checks and reflection (the `grpc.*` services) are not traced: probes call them every
 * few seconds, and a root trace per probe would bury the traces of real work.
 */
const untraced = (typeName: string): boolean => typeName.startsWith("grpc.");

/** A method's span name and start attributes: the same for every call over one protocol. */
interface MethodSpan {
  name: string;
  attributes: TraceAttributes;
}

export function createTracingInterceptor(tracer: Tracer): Interceptor {
  // Built once per method and protocol rather than per call, keyed by the method's descriptor
  // (one object per method): the SDK copies the attributes it is given, so sharing is safe.
  const byProtocol = new Map<string, Map<object, MethodSpan>>();
  const methodSpan = (service: string, method: { name: string }, system: string): MethodSpan => {
    let methods = byProtocol.get(system);
    if (methods === undefined) byProtocol.set(system, (methods = new Map()));
    let found = methods.get(method);
    if (found === undefined) {
      found = {
        name: `${service}/${method.name}`,
        attributes: { "rpc.system": system, "rpc.service": service, "rpc.method": method.name },
      };
      methods.set(method, found);
    }
    return found;
  };
  return (next) => async (req) => {
    if (untraced(req.service.typeName)) return next(req);
    const traceparent = req.header.get("traceparent") ?? undefined;
    const system = rpcSystemOf(req.header.get("content-type"));
    const { name, attributes } = methodSpan(req.service.typeName, req.method, system);
    const span = tracer.startSpan(name, {
      kind: "server",
      ...(traceparent !== undefined && { parent: traceparent }),
      attributes,
    });
    req.contextValues.set(rpcSpanKey, span);
    let res;
    try {
      res = await next(req);
    } catch (error) {
      settle(span, error);
      throw error;
    }
    if (!res.stream) {
      settle(span);
      return res;
    }
    return { ...res, message: endedWith(span, res.message) };
  };
}
