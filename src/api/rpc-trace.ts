// The RPC's span, handed from the tracing interceptor (src/server/tracing.ts) to the handlers in
// the call's context values: input a call submits stores its traceparent, so the turn that runs it
// (in the session driver, maybe on another replica) hangs under the call. Passed explicitly, not
// through an async context, which would hook every promise of the process (ADR 0013).
import { createContextKey, type ContextValues } from "@connectrpc/connect";
import type { TraceSpan } from "../ports/tracer.js";

/** Set by the tracing interceptor; undefined when tracing is off or the call is not traced. */
export const rpcSpanKey = createContextKey<TraceSpan | undefined>(undefined, {
  description: "tether rpc span",
});

/** The calling RPC's traceparent, to store with input it submits (none when not traced). */
export function rpcTraceOf(values: ContextValues): { trace?: string } {
  const trace = values.get(rpcSpanKey)?.traceparent;
  return trace === undefined ? {} : { trace };
}
