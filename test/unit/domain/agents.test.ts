// The stored encoding of an agent definition: what it writes, and that it reads both its own
// form and the protobuf JSON the API stored before it (literal strings as they sit in stores).
import { describe, expect, test } from "vitest";
import {
  decodeAgentDefinition,
  encodeAgentDefinition,
  type AgentDefinition,
} from "../../../src/domain/agents.js";

/** A definition as the API stored it before the domain owned the encoding (protobuf JSON). */
const STORED_PROTOJSON =
  '{"model":"m1","systemPrompt":"be brief","temperature":0,"maxOutputTokens":256,"tokenBudget":"5000",' +
  '"clientTools":[{"name":"lookup","description":"asks the client","parametersJsonSchema":' +
  '"{\\"type\\":\\"object\\",\\"properties\\":{\\"q\\":{\\"type\\":\\"string\\"}}}","requiresApproval":true},' +
  '{"name":"ping"}],"serverTools":["mail"],"approvalRequiredTools":["mail__send"],' +
  '"responseFormat":{"jsonSchema":"{\\"type\\":\\"object\\"}"}}';

const FULL: AgentDefinition = {
  model: "m1",
  systemPrompt: "be brief",
  temperature: 0,
  maxOutputTokens: 256,
  maxTurnTokens: 5000,
  clientTools: [
    {
      name: "lookup",
      description: "asks the client",
      inputSchema: { type: "object", properties: { q: { type: "string" } } },
      requiresApproval: true,
    },
    { name: "ping", description: "", inputSchema: { type: "object" } },
  ],
  serverTools: ["mail"],
  approvalRequiredTools: ["mail__send"],
  responseFormat: { name: "response", schema: { type: "object" } },
};

describe("agent definition encoding", () => {
  test("a definition stored as protobuf JSON still reads, every field", () => {
    expect(decodeAgentDefinition(STORED_PROTOJSON)).toEqual(FULL);
  });

  test("the encoding writes schemas as JSON and a budget as a number", () => {
    expect(encodeAgentDefinition(FULL)).toBe(
      '{"model":"m1","systemPrompt":"be brief","temperature":0,"maxOutputTokens":256,"tokenBudget":5000,' +
        '"clientTools":[{"name":"lookup","description":"asks the client","inputSchema":{"type":"object",' +
        '"properties":{"q":{"type":"string"}}},"requiresApproval":true},{"name":"ping","inputSchema":' +
        '{"type":"object"}}],"serverTools":["mail"],"approvalRequiredTools":["mail__send"],' +
        '"responseFormat":{"name":"response","schema":{"type":"object"}}}',
    );
    expect(decodeAgentDefinition(encodeAgentDefinition(FULL))).toEqual(FULL);
  });

  test("for plain fields the two encodings coincide, byte for byte", () => {
    const protojson =
      '{"model":"m1","systemPrompt":"be brief","temperature":0.5,"maxOutputTokens":256,"maxIterations":4}';
    expect(encodeAgentDefinition(decodeAgentDefinition(protojson))).toBe(protojson);
  });

  test("an empty definition is {} both ways", () => {
    expect(decodeAgentDefinition("{}")).toEqual({ clientTools: [] });
    expect(encodeAgentDefinition({ clientTools: [] })).toBe("{}");
  });

  test("keeps the front door's metadata, first creation time and echoed fields (ADR 0037)", () => {
    const labelled: AgentDefinition = {
      model: "m",
      clientTools: [],
      metadata: { team: "ops" },
      createdAtMs: 1_700_000_000_000,
      echo: { service_tier: "flex", reasoning: { effort: "high" } },
    };
    const text = encodeAgentDefinition(labelled);
    expect(text).toBe(
      '{"model":"m","metadata":{"team":"ops"},"createdAtMs":1700000000000,' +
        '"echo":{"service_tier":"flex","reasoning":{"effort":"high"}}}',
    );
    expect(decodeAgentDefinition(text)).toEqual(labelled);
  });
});
