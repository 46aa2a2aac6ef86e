// A session bound to an agent version: every turn of the session runs with that version's
// definition, overlaid by the turn's own options. The binding lives in the session's metadata
// under reserved keys, so binding and moving the pin are commits like any metadata change; clients
// see it as the session's `agent` and may not set `tether.` keys themselves.
import { invalidArgument } from "./errors.js";

const AGENT_ID_KEY = "tether.agent_id";
const AGENT_VERSION_KEY = "tether.agent_version";
const RESERVED_PREFIX = "tether.";

export interface AgentBinding {
  /** The agent's store id (tenant-scoped). */
  agentId: string;
  version: number;
}

export function bindingOf(metadata: Readonly<Record<string, string>>): AgentBinding | undefined {
  const agentId = metadata[AGENT_ID_KEY];
  const version = Number(metadata[AGENT_VERSION_KEY]);
  if (agentId === undefined || agentId === "" || !Number.isSafeInteger(version)) return undefined;
  return { agentId, version };
}

/** The metadata patch that binds (or, with undefined, unbinds) a session. */
export function bindingPatch(binding: AgentBinding | undefined): Record<string, string> {
  return binding === undefined
    ? { [AGENT_ID_KEY]: "", [AGENT_VERSION_KEY]: "" }
    : { [AGENT_ID_KEY]: binding.agentId, [AGENT_VERSION_KEY]: String(binding.version) };
}

/** Metadata as clients see it: the reserved keys are shown elsewhere. */
export function clientMetadata(metadata: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata).filter(([key]) => !key.startsWith(RESERVED_PREFIX)),
  );
}

/** Clients set their own keys only. */
export function checkClientMetadata(metadata: Readonly<Record<string, string>>): void {
  for (const key of Object.keys(metadata)) {
    if (key.startsWith(RESERVED_PREFIX)) {
      throw invalidArgument(
        `metadata.${key}`,
        `keys starting with "${RESERVED_PREFIX}" are Tether's own`,
      );
    }
  }
}
