// Errors about the resources clients create by id beside sessions: agents, schedules and webhook
// endpoints (codes in errors.ts, mapped to gRPC in src/api/errors.ts like every other).
import { TetherError } from "./errors.js";

export function agentNotFound(agentId: string, version?: number): TetherError {
  const what =
    version === undefined ? `agent ${agentId}` : `version ${version} of agent ${agentId}`;
  return new TetherError("agent_not_found", `${what} does not exist`, {
    fields: { agentId, ...(version !== undefined && { version }) },
  });
}

export function agentAlreadyExists(agentId: string): TetherError {
  return new TetherError("agent_already_exists", `agent ${agentId} already exists`, {
    fields: { agentId },
  });
}

export function agentVersionConflict(
  agentId: string,
  expected: number,
  latest: number,
): TetherError {
  return new TetherError(
    "agent_version_conflict",
    `agent ${agentId} is at version ${latest}, not ${expected}: read it again and retry`,
    { fields: { agentId, expectedVersion: expected, latestVersion: latest } },
  );
}

export function scheduleNotFound(scheduleId: string): TetherError {
  return new TetherError("schedule_not_found", `schedule ${scheduleId} does not exist`, {
    fields: { scheduleId },
  });
}

/** Creation is idempotent on the client's id: only another body under the same id is refused. */
export function scheduleAlreadyExists(scheduleId: string): TetherError {
  return new TetherError(
    "schedule_already_exists",
    `schedule ${scheduleId} already exists with another body`,
    { fields: { scheduleId } },
  );
}

export function webhookEndpointNotFound(endpointId: string): TetherError {
  return new TetherError(
    "webhook_endpoint_not_found",
    `webhook endpoint ${endpointId} does not exist`,
    {
      fields: { endpointId },
    },
  );
}

export function webhookEndpointAlreadyExists(endpointId: string): TetherError {
  return new TetherError(
    "webhook_endpoint_already_exists",
    `webhook endpoint ${endpointId} already exists`,
    { fields: { endpointId } },
  );
}
