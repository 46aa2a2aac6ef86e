// The one builder of the Agents API's AgentSession object (ADR 0037, "One AgentSession shape"),
// for both of its sources: GET/POST /sessions (session-object.ts) read it from the store, and the
// SSE stream's session events (event-translator.ts) read it from the log alone. What the log
// cannot tell (times, the agent, metadata, usage) is left out of an event's session rather than
// faked, so an event's session is a strict subset of the stored one, keys and values alike.
import { argumentsOf, type RequiredAction, type SessionStatus } from "./event-objects.js";

/** What only the store knows of a session: absent for a session built from the log. */
export interface StoredSessionFacts {
  createdAt: number | null;
  lastActiveAt: number | null;
  agent: unknown;
  metadata: Record<string, string>;
  usage: Record<string, unknown>;
}

export interface AgentSessionFacts {
  id: string;
  status: SessionStatus;
  requiredActions: readonly RequiredAction[];
  stored?: StoredSessionFacts;
}

export function agentSession(facts: AgentSessionFacts): { id: string } & Record<string, unknown> {
  const { stored } = facts;
  return {
    id: facts.id,
    object: "agent.session",
    ...(stored && { created_at: stored.createdAt, last_active_at: stored.lastActiveAt }),
    status: facts.status,
    // Tether's sessions do not fail: a turn fails, the session goes on.
    error: null,
    ...(stored && { agent: stored.agent }),
    environment: { type: "none" },
    ...(stored && { metadata: stored.metadata }),
    required_actions: facts.requiredActions,
    ...(stored && { usage: stored.usage }),
    vault_ids: [],
    // Typed as required by the Python SDK; Tether prices no models, so there is no limit in cents.
    spend_control: { limit: null, consumed: null },
  };
}

/** A client call the turn waits for: the arguments as an object when they parse. */
export function functionCallAction(
  callId: string,
  name: string,
  argumentsJson: string,
  turnId: string,
): RequiredAction {
  return {
    type: "function_call",
    call_id: callId,
    name,
    arguments: argumentsOf(argumentsJson),
    turn_id: turnId,
  };
}

/**
 * An approval the turn waits for, as the SDK's only approval kind: `mcp_approval_request`, its
 * arguments the JSON text the model wrote (as MCP approval requests carry them), its server the
 * tool server of a `<server>__<tool>` name, else `client` (a client tool's approval).
 */
export function approvalAction(
  callId: string,
  name: string | null,
  argumentsJson: string,
  turnId: string,
): RequiredAction {
  return {
    type: "mcp_approval_request",
    request_id: callId,
    turn_id: turnId,
    request: {
      type: "mcp_tool_call",
      name,
      arguments: argumentsJson,
      server_label: serverLabelOf(name),
      message: `Tether asks to approve the call of ${name ?? "a tool"}`,
    },
  };
}

function serverLabelOf(name: string | null): string {
  const at = name?.indexOf("__") ?? -1;
  return name && at > 0 ? name.slice(0, at) : "client";
}
