// The AgentSession object of the Agents API, computed from Tether's state (ADR 0037): the session's
// committed summary (usage, metadata, its agent binding), its lease (a turn running), its parked
// turn with the waits still pending (requires_action), and the agent version it is pinned to.
// Nothing here is stored for the door: every field is read from what the runtime already keeps.
import type { AgentVersion } from "../domain/agents.js";
import { clientMetadata } from "../domain/agent-binding.js";
import type { ToolCallPart } from "../domain/conversation.js";
import type { SessionExecutionLease } from "../domain/lease.js";
import type { ParkedTurn } from "../domain/parked-turns.js";
import type { SessionSummary } from "../domain/session.js";
import type { ToolCallState } from "../domain/tool-calls.js";
import { parkedBatch } from "../runtime/index.js";
import { sortableIdTime } from "./agent-ids.js";
import { agentObject } from "./agent-object.js";

export const SESSION_ID_PREFIX = "sess_";

/** Everything one AgentSession is computed from (read by session-reads.ts). */
export interface SessionState {
  summary: Pick<SessionSummary, "sessionId" | "usage" | "metadata">;
  lease: SessionExecutionLease | undefined;
  parked: ParkedTurn | undefined;
  /** The parked turn's waits as the store has them now (pending or settled). */
  calls: readonly ToolCallState[];
  /** The pinned agent version and its id as the client names it; none for an unbound session. */
  agent: { version: AgentVersion; clientId: string } | undefined;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

export function sessionObject(state: SessionState, clientId: string, nowMs: number) {
  const { summary, lease, parked } = state;
  const required = requiredActions(parked, state.calls);
  const createdMs = sortableIdTime(SESSION_ID_PREFIX, clientId);
  // The latest activity the state shows: now while a turn holds the lease, else when the turn
  // parked, else the creation (Tether keeps no per-session activity stamp).
  const activeMs = lease ? nowMs : (parked?.parkedAtMs ?? createdMs);
  const u = summary.usage;
  return {
    id: clientId,
    object: "agent.session",
    created_at: createdMs === undefined ? null : seconds(createdMs),
    last_active_at: activeMs === undefined ? null : seconds(activeMs),
    status: lease
      ? "in_progress"
      : parked
        ? required.length > 0
          ? "requires_action"
          : "in_progress"
        : "idle",
    error: null,
    agent: state.agent ? agentObject(state.agent.version, state.agent.clientId) : null,
    environment: { type: "none" },
    metadata: clientMetadata(summary.metadata),
    required_actions: lease ? [] : required,
    usage: {
      input_tokens: u.inputTokens,
      input_tokens_details: { cached_tokens: u.cacheReadTokens },
      output_tokens: u.outputTokens,
      output_tokens_details: { reasoning_tokens: u.reasoningTokens },
      total_tokens: u.inputTokens + u.outputTokens,
    },
    vault_ids: [],
    // Typed as required by the Python SDK; Tether prices no models, so there is no limit in cents.
    spend_control: { limit: null, consumed: null },
  };
}

/**
 * The parked turn's waits still pending, as the SDK's required actions: a client call's result is
 * a `function_call`, an approval an `mcp_approval_request` (a client tool's approval too, under
 * `server_label: "client"`). Names and arguments come from the batch the turn parked on.
 */
function requiredActions(parked: ParkedTurn | undefined, calls: readonly ToolCallState[]) {
  if (!parked) return [];
  const settled = new Set(
    calls.filter((c) => c.status !== "pending").map((c) => `${c.kind}:${c.callId}`),
  );
  const batch = new Map<string, ToolCallPart>(
    parkedBatch(parked.progress).map((call) => [call.callId, call]),
  );
  return parked.waitingOn
    .filter((wait) => !settled.has(`${wait.kind}:${wait.callId}`))
    .map((wait) => {
      const call = batch.get(wait.callId);
      const name = call?.toolName ?? null;
      const argumentsJson = call?.argumentsJson ?? "{}";
      if (wait.kind === "result") {
        return {
          type: "function_call" as const,
          call_id: wait.callId,
          name: name ?? "",
          arguments: parsedArguments(argumentsJson),
          turn_id: parked.turnId,
        };
      }
      return {
        type: "mcp_approval_request" as const,
        request_id: wait.callId,
        turn_id: parked.turnId,
        request: {
          type: "mcp_tool_call" as const,
          name,
          arguments: argumentsJson,
          server_label: serverLabelOf(name),
          message: `Tether asks to approve the call of ${name ?? "a tool"}`,
        },
      };
    });
}

/** The object the helpers prefer; a string the model wrote that is not JSON stays a string. */
function parsedArguments(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/** A tool server's tools are `<server>__<tool>`; any other name is a client tool. */
function serverLabelOf(name: string | null): string {
  const at = name?.indexOf("__") ?? -1;
  return name && at > 0 ? name.slice(0, at) : "client";
}
