// The observation room: what a turn's calls look like from outside. Spans of model and tool calls
// (call-trace.ts) with their semconv names (trace-names.ts), and the metrics of every model call
// (model-call-metrics.ts). Each wraps a port the engine sees and knows nothing of turns or
// sessions, so it imports no other room; the turn's own span stays with the turn (turn-trace.ts).
export { traceProvider, traceTools, type OpenSpans, type ToolTraceContext } from "./call-trace.js";
export { GEN_AI, providerNameOf, TETHER, TURN_EVENTS } from "./trace-names.js";
export { withModelCallMetrics } from "./model-call-metrics.js";
