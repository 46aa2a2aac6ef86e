// Agents at the edge: a definition is checked field by field and stored as its protojson; a
// stored version travels to the client with its id in the client's form and back. Refusals name
// the field under `definition.` (or `agent.`).
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  agentFromProto,
  agentToProto,
  definitionFromStore,
  definitionToStore,
} from "../../../../src/api/convert/agents.js";
import type { AgentVersion } from "../../../../src/domain/agents.js";
import {
  AgentDefinitionSchema,
  AgentSchema,
} from "../../../../src/gen/tether/v1/agent_service_pb.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire, tenant } from "./support.js";

const tool = (name: string, parametersJsonSchema = '{"type":"object"}') => ({
  name,
  description: `the ${name} tool`,
  parametersJsonSchema,
});

const definition = (init: Parameters<typeof create<typeof AgentDefinitionSchema>>[1] = {}) =>
  create(AgentDefinitionSchema, init);

describe("definitionToStore", () => {
  test("a definition is stored as its protojson, defaults left out", () => {
    const stored = definitionToStore(
      definition({
        model: "small-1",
        systemPrompt: "be brief",
        temperature: 0,
        maxIterations: 4,
        tokenBudget: 5000n,
        clientTools: [tool("lookup")],
        serverTools: ["files"],
        approvalRequiredTools: ["lookup"],
        responseFormat: { name: "answer", jsonSchema: '{"type":"object"}' },
      }),
    );
    expect(JSON.parse(stored)).toEqual({
      model: "small-1",
      systemPrompt: "be brief",
      temperature: 0,
      maxIterations: 4,
      tokenBudget: "5000",
      clientTools: [
        {
          name: "lookup",
          description: "the lookup tool",
          parametersJsonSchema: '{"type":"object"}',
        },
      ],
      serverTools: ["files"],
      approvalRequiredTools: ["lookup"],
      responseFormat: { name: "answer", jsonSchema: '{"type":"object"}' },
    });
  });

  test("an absent definition is the empty one", () => {
    expect(definitionToStore(undefined)).toBe("{}");
    expect(definitionToStore(definition())).toBe("{}");
  });

  test("the stored JSON reads back as the same definition", () => {
    const pb = definition({ model: "m", maxOutputTokens: 256, clientTools: [tool("a")] });
    expect(definitionFromStore(definitionToStore(pb))).toEqual(pb);
  });

  test.each([
    [{ temperature: 2.5 }, "definition.temperature"],
    [{ maxIterations: 101 }, "definition.max_iterations"],
    [{ clientTools: [tool("a"), tool("a")] }, "definition.client_tools[1].name"],
    [{ clientTools: [tool("a", "[]")] }, "definition.client_tools[0].parameters_json_schema"],
    [{ responseFormat: { name: "bad name", jsonSchema: "{}" } }, "definition.response_format.name"],
    [{ responseFormat: { name: "r", jsonSchema: "[]" } }, "definition.response_format.json_schema"],
  ] satisfies [Parameters<typeof definition>[0], string][])(
    "%o is refused naming %s",
    (init, field) => {
      expectRefusal(() => definitionToStore(definition(init)), field);
    },
  );
});

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
