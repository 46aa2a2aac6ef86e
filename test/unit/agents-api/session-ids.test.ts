// Door-made session ids (`sess_…`) sort newest first and carry their creation time, which the
// AgentSession shows as `created_at`; the list's `metadata[key]=value` and `agent_id` filters.
import { describe, expect, it } from "vitest";
import { newSortableId, sortableIdTime } from "../../../src/agents-api/agent-ids.js";
import { sessionFilterOf } from "../../../src/agents-api/session-list.js";

describe("door session ids", () => {
  it("sort newest first, also within one millisecond, and give back their time", () => {
    const at = 1_800_000_000_123;
    const older = newSortableId("sess_", at);
    const newer = newSortableId("sess_", at);
    const later = newSortableId("sess_", at + 5_000);
    expect([later, newer, older].sort()).toEqual([later, newer, older]);
    expect(sortableIdTime("sess_", older)).toBe(at);
    expect(sortableIdTime("sess_", later)).toBe(at + 5_000);
    expect(sortableIdTime("sess_", "grpc-made")).toBeUndefined();
  });

  it("reads the list filters from the query", () => {
    expect(
      sessionFilterOf({
        "metadata[team]": "ops",
        "metadata[a b]": "c",
        agent_id: "agent_1",
        limit: "2",
      }),
    ).toEqual({ agentId: "agent_1", metadata: { team: "ops", "a b": "c" } });
  });
});
