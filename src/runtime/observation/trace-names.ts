// Span and attribute names, in one place. The gen_ai.* names follow the OpenTelemetry semantic
// conventions for generative AI as of semconv v1.37.0 (still "Development" status upstream, so
// copied here rather than imported, as the semantic-conventions package advises); tether.* are
// Tether's own. ADR 0013 pins the version.

export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  conversationId: "gen_ai.conversation.id",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  requestTemperature: "gen_ai.request.temperature",
  requestMaxTokens: "gen_ai.request.max_tokens",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  finishReasons: "gen_ai.response.finish_reasons",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  systemInstructions: "gen_ai.system_instructions",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
} as const;

export const TETHER = {
  turnId: "tether.turn.id",
  turnEnd: "tether.turn.end",
  outcome: "tether.turn.outcome",
  resumed: "tether.turn.resumed",
  fencingToken: "tether.lease.fencing_token",
  leaseOwner: "tether.lease.owner",
  headRevision: "tether.session.head_revision",
  toolOrigin: "tether.tool.origin",
  toolParked: "tether.tool.parked",
  attempt: "tether.model.attempt",
  waitingOn: "tether.turn.waiting_on",
} as const;

/** Span events on the turn span. */
export const TURN_EVENTS = {
  leaseClaimed: "tether.lease.claimed",
  parked: "tether.turn.parked",
  committed: "tether.turn.committed",
} as const;

/** The gen_ai.provider.name of Tether's adapters (the well-known values where one exists). */
export function providerNameOf(adapter: string): string {
  if (adapter === "openai-chat") return "openai";
  if (adapter === "anthropic-messages") return "anthropic";
  return adapter;
}
