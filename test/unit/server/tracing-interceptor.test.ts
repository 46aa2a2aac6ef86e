// The RPC span of a server stream (src/server/tracing.ts): it ends with the stream, once, with
// the call's status, whether the stream finishes, fails, or the client leaves it early.
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { TraceAttributes, TraceSpan, Tracer } from "../../../src/ports/tracer.js";
import { createTracingInterceptor } from "../../../src/server/tracing.js";

interface RecordedSpan extends TraceSpan {
  name: string;
  attributes: Record<string, unknown>;
  failures: { error: unknown; type: string | undefined }[];
  ends: number;
}

function recordingTracer(): { tracer: Tracer; spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  const tracer: Tracer = {
    captureContent: false,
    startSpan(name, options) {
      const span: RecordedSpan = {
        name,
        attributes: { ...options.attributes },
        failures: [],
        ends: 0,
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        setAttributes: (attributes: TraceAttributes) => Object.assign(span.attributes, attributes),
        addEvent: () => undefined,
        addLinks: () => undefined,
        fail: (error, type) => span.failures.push({ error, type }),
        end: () => {
          span.ends += 1;
        },
      };
      spans.push(span);
      return span;
    },
  };
  return { tracer, spans };
}

/** A server stream of `values`, failing after them with `failure` when given; counts return(). */
function stream(values: number[], failure?: Error) {
  const state = { returned: 0, pulled: 0 };
  const messages: AsyncIterable<number> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const value = values[state.pulled++];
        if (value !== undefined) return Promise.resolve({ done: false, value });
        return failure
          ? Promise.reject(failure)
          : Promise.resolve({ done: true, value: undefined });
      },
      return: () => {
        state.returned += 1;
        return Promise.resolve({ done: true, value: undefined });
      },
    }),
  };
  return { messages, state };
}

/** Runs one streaming call through the interceptor: its span and its response's messages. */
async function call(
  messages: AsyncIterable<number>,
  recording = recordingTracer(),
  contentType = "application/grpc+proto",
) {
  const { tracer, spans } = recording;
  const next = (() =>
    Promise.resolve({ stream: true, message: messages })) as unknown as Parameters<
    ReturnType<typeof createTracingInterceptor>
  >[0];
  const req = {
    service: { typeName: "tether.v1.TurnService" },
    method: { name: "StreamTurn" },
    header: new Headers({ "content-type": contentType }),
    contextValues: createContextValues(),
  } as unknown as Parameters<typeof next>[0];
  const res = (await createTracingInterceptor(tracer)(next)(req)) as unknown as {
    message: AsyncIterable<number>;
  };
  const span = spans.at(-1);
  if (span === undefined) throw new Error("no span started");
  return { span, out: res.message };
}

describe("the RPC span of a server stream", () => {
  it("passes every message through and ends once, with status 0, when the stream is done", async () => {
    const { messages, state } = stream([1, 2, 3]);
    const { span, out } = await call(messages);
    const seen: number[] = [];
    const it = out[Symbol.asyncIterator]();
    for (;;) {
      const step = await it.next();
      if (step.done === true) break;
      seen.push(step.value);
      expect(span.ends).toBe(0);
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(span.ends).toBe(1);
    expect(span.attributes["rpc.grpc.status_code"]).toBe(0);
    expect(span.failures).toEqual([]);
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(span.ends).toBe(1);
    expect(state.returned).toBe(1);
  });

  it("a stream that fails ends its span with the error's gRPC code, and the error reaches the caller", async () => {
    const failure = new ConnectError("lease lost", Code.Aborted);
    const { messages } = stream([1], failure);
    const { span, out } = await call(messages);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const m of out) seen.push(m);
      })(),
    ).rejects.toBe(failure);
    expect(seen).toEqual([1]);
    expect(span.ends).toBe(1);
    expect(span.attributes["rpc.grpc.status_code"]).toBe(Code.Aborted);
    expect(span.failures).toEqual([{ error: failure, type: "Aborted" }]);
  });

  it("a client that leaves early closes the inner stream, and the span ends once", async () => {
    const { messages, state } = stream([1, 2, 3, 4]);
    const { span, out } = await call(messages);
    for await (const m of out) if (m === 2) break;
    expect(state.returned).toBe(1);
    expect(state.pulled).toBe(2);
    expect(span.ends).toBe(1);
    expect(span.attributes["rpc.grpc.status_code"]).toBe(0);
  });

  it("names each call's span by its method and protocol, with no call's attributes leaking into another's", async () => {
    const recording = recordingTracer();
    const first = await call(stream([]).messages, recording);
    for await (const _ of first.out) expect.unreachable();
    const failure = new ConnectError("gone", Code.NotFound);
    const second = await call(stream([], failure).messages, recording);
    await expect(second.out[Symbol.asyncIterator]().next()).rejects.toBe(failure);
    const third = await call(stream([]).messages, recording, "application/json");
    const rpc = (system: string) => ({
      "rpc.system": system,
      "rpc.service": "tether.v1.TurnService",
      "rpc.method": "StreamTurn",
    });
    expect(recording.spans.map((s) => s.name)).toEqual([
      "tether.v1.TurnService/StreamTurn",
      "tether.v1.TurnService/StreamTurn",
      "tether.v1.TurnService/StreamTurn",
    ]);
    expect(first.span.attributes).toEqual({ ...rpc("grpc"), "rpc.grpc.status_code": 0 });
    expect(second.span.attributes).toEqual({
      ...rpc("grpc"),
      "rpc.grpc.status_code": Code.NotFound,
    });
    expect(third.span.attributes).toEqual(rpc("connect_rpc"));
  });
});
