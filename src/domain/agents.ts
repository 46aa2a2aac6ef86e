// Agents as data: a named, versioned definition of how a session's turns run (model, system
// prompt, options, tools). Every update makes a new immutable version; old versions stay readable,
// also after the agent is deleted, so a session pinned to a version keeps working. The store keeps
// a version's definition as an opaque JSON string (see runtime/turn/agent-definition.ts).
export interface AgentVersion {
  agentId: string;
  /** 1 for the first version; each update adds one. */
  version: number;
  displayName: string;
  definition: string;
  createdAtMs: number;
}

export interface AgentDraft {
  agentId: string;
  displayName: string;
  definition: string;
}

export interface AgentUpdate extends AgentDraft {
  /** The version the caller read: the update applies only while it is still the latest. */
  expectedVersion: number;
}

export interface AgentListPage {
  /** The latest version of each agent, in id order. */
  agents: AgentVersion[];
  /** Pass as `cursor` for the next page; undefined on the last page. */
  nextCursor: string | undefined;
}
