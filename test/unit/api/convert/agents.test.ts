// AgentDefinition at the edge: decoded once from tether.v1 into the domain's definition (refusals
// name the field under `definition.`), written back to the wire for GetAgent, and stored in an
// encoding that reads what the API stored before as protobuf JSON.
import { create, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import {
  definitionFromProto,
  definitionToProto,
  definitionToStore,
  storedDefinitionToProto,
} from "../../../../src/api/convert/agents.js";
import { AgentDefinitionSchema } from "../../../../src/gen/tether/v1/agent_service_pb.js";
import { expectRefusal, overTheWire } from "./support.js";

const definition = (init: Parameters<typeof create<typeof AgentDefinitionSchema>>[1]) =>
  overTheWire(AgentDefinitionSchema, create(AgentDefinitionSchema, init));

describe("agent definitions", () => {
  test("every field is decoded into the domain's terms", () => {
    const decoded = definitionFromProto(
      definition({
        model: "m1",
        systemPrompt: "be brief",
        temperature: 0,
        maxOutputTokens: 256,
        maxIterations: 4,
        tokenBudget: 5000n,
        clientTools: [
          { name: "lookup", description: "d", parametersJsonSchema: '{"type":"object"}' },
          { name: "ping", requiresApproval: true },
        ],
        serverTools: ["mail", "mail"],
        approvalRequiredTools: ["mail__send"],
        responseFormat: { jsonSchema: '{"type":"object"}' },
      }),
    );
    expect(decoded).toEqual({
      model: "m1",
      systemPrompt: "be brief",
      temperature: 0,
      maxOutputTokens: 256,
      maxIterations: 4,
      maxTurnTokens: 5000,
      clientTools: [
        { name: "lookup", description: "d", inputSchema: { type: "object" } },
        { name: "ping", description: "", inputSchema: { type: "object" }, requiresApproval: true },
      ],
      serverTools: ["mail"],
      approvalRequiredTools: ["mail__send"],
      responseFormat: { name: "response", schema: { type: "object" } },
    });
  });

  test("no definition and an all-default one both mean no settings and no tools", () => {
    expect(definitionFromProto(undefined)).toEqual({ clientTools: [] });
    expect(definitionFromProto(definition({}))).toEqual({ clientTools: [] });
  });

  test("a bad field is refused naming it under definition.", () => {
    expectRefusal(
      () => definitionFromProto(definition({ temperature: 3 })),
      "definition.temperature",
    );
    expectRefusal(
      () => definitionFromProto(definition({ clientTools: [{ name: "a b" }] })),
      "definition.client_tools[0].name",
    );
    expectRefusal(
      () => definitionFromProto(definition({ responseFormat: { jsonSchema: "[" } })),
      "definition.response_format.json_schema",
    );
  });

  test("for plain fields the stored encoding is the protobuf JSON stored before", () => {
    const pb = definition({ model: "m1", systemPrompt: "s", temperature: 0.5, maxIterations: 4 });
    expect(definitionToStore(pb)).toBe(toJsonString(AgentDefinitionSchema, pb));
    expect(definitionToStore(pb)).toBe(
      '{"model":"m1","systemPrompt":"s","temperature":0.5,"maxIterations":4}',
    );
  });

  test("a definition stored as protobuf JSON is shown on the wire as it was given", () => {
    const stored =
      '{"model":"m1","tokenBudget":"70","clientTools":[{"name":"lookup","parametersJsonSchema":' +
      '"{\\"type\\":\\"object\\"}","requiresApproval":true}],"responseFormat":{"name":"answer",' +
      '"jsonSchema":"{\\"type\\":\\"string\\"}"}}';
    const pb = overTheWire(AgentDefinitionSchema, storedDefinitionToProto(stored));
    expect(pb.model).toBe("m1");
    expect(pb.tokenBudget).toBe(70n);
    expect(pb.temperature).toBeUndefined();
    expect(pb.clientTools.map((t) => [t.name, t.parametersJsonSchema, t.requiresApproval])).toEqual(
      [["lookup", '{"type":"object"}', true]],
    );
    expect(pb.responseFormat).toMatchObject({ name: "answer", jsonSchema: '{"type":"string"}' });
  });

  test("the domain's definition goes to the wire field by field", () => {
    const pb = definitionToProto({
      systemPrompt: "p",
      maxOutputTokens: 9,
      clientTools: [{ name: "t", description: "d", inputSchema: { type: "object" } }],
      serverTools: ["mail"],
    });
    expect(pb).toMatchObject({
      model: "",
      systemPrompt: "p",
      maxOutputTokens: 9,
      maxIterations: 0,
      tokenBudget: 0n,
      serverTools: ["mail"],
      approvalRequiredTools: [],
    });
    expect(pb.clientTools[0]).toMatchObject({
      name: "t",
      description: "d",
      parametersJsonSchema: '{"type":"object"}',
      requiresApproval: false,
    });
    expect(pb.responseFormat).toBeUndefined();
  });
});
