// Agent versions at the edge: a stored version travels to the client with its id in the client's
// form and back; refusals name the field under `agent.`. (Definitions: agents.test.ts.)
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import { agentFromProto, agentToProto } from "../../../../src/api/convert/agents.js";
import type { AgentVersion } from "../../../../src/domain/agents.js";
import { AgentSchema } from "../../../../src/gen/tether/v1/agent_service_pb.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire, tenant } from "./support.js";

describe("Agent", () => {
  const stored: AgentVersion = {
    agentId: "t1:helper",
    version: 3,
    displayName: "Helper",
    definition: '{"model":"small-1","maxIterations":4}',
    createdAtMs: MAX_SAFE,
  };

  test("a stored version reaches the client with its id unscoped and its definition decoded", () => {
    const wire = overTheWire(AgentSchema, agentToProto(stored, tenant));
    expect(wire.agentId).toBe("helper");
    expect(wire.version).toBe(3n);
    expect(wire.displayName).toBe("Helper");
    expect(wire.definition?.model).toBe("small-1");
    expect(wire.definition?.maxIterations).toBe(4);
    expect(wire.createdAtMs).toBe(9007199254740991n);
    expect(agentFromProto(wire, tenant)).toEqual(stored);
  });

  test("a version without a definition reads as the empty one", () => {
    const pb = create(AgentSchema, { agentId: "helper", version: 1n, createdAtMs: 5n });
    expect(agentFromProto(pb, tenant)).toEqual({
      agentId: "t1:helper",
      version: 1,
      displayName: "",
      definition: "{}",
      createdAtMs: 5,
    });
  });

  test("an absent agent or a bad agent id is refused naming the field", () => {
    expectRefusal(() => agentFromProto(undefined, tenant), "agent");
    expectRefusal(
      () => agentFromProto(create(AgentSchema, { agentId: "no spaces" }), tenant),
      "agent.agent_id",
    );
  });

  test("a version or creation time past the safe range is refused naming the field", () => {
    const pb = () => create(AgentSchema, { agentId: "helper", version: 1n });
    expectRefusal(() => agentFromProto({ ...pb(), version: MAX_UINT64 }, tenant), "agent.version");
    expectRefusal(
      () => agentFromProto({ ...pb(), createdAtMs: -(2n ** 60n) }, tenant),
      "agent.created_at_ms",
    );
  });
});
