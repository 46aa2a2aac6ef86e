// An MCP server's tool output schemas go through the same bounded, RE2-backed compiler as
// tenants' schemas (ADR 0027): the SDK client checks a result's structured content by them, a
// catastrophic pattern runs in linear time, and a schema the compiler refuses fails that tool's
// calls only, the tool list staying up.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { schemaValidator } from "../../../src/mcp/connection.js";
import { mcpOutputSchemas } from "../../../src/server/build-runtime.js";

const TOOLS = [
  {
    name: "word",
    inputSchema: { type: "object" as const },
    outputSchema: {
      type: "object" as const,
      properties: { word: { type: "string", pattern: "^(a+)+$" } },
      required: ["word"],
    },
  },
  {
    name: "echoed",
    inputSchema: { type: "object" as const },
    outputSchema: {
      type: "object" as const,
      properties: { word: { type: "string", pattern: "^(a)\\1$" } },
    },
  },
];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A client with Tether's validator, connected to a server whose tools answer `word`. */
async function connect(word: string): Promise<Client> {
  const server = new Server({ name: "schemas", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, () => ({
    content: [],
    structuredContent: { word },
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client(
    { name: "tether", version: "1" },
    { jsonSchemaValidator: schemaValidator(mcpOutputSchemas) },
  );
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return client;
}

describe("MCP tool output schemas", () => {
  test("a catastrophic pattern checks 40 a's and a '!' in linear time", async () => {
    const client = await connect(`${"a".repeat(40)}!`);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["word", "echoed"]);
    await expect(client.callTool({ name: "word", arguments: {} })).rejects.toThrow(
      /does not match the tool's output schema: \/word must match pattern/u,
    );
  });

  test("a matching result passes", async () => {
    const client = await connect("a".repeat(40));
    await client.listTools();
    const result = await client.callTool({ name: "word", arguments: {} });
    expect(result.structuredContent).toEqual({ word: "a".repeat(40) });
  });

  test("a schema the compiler refuses fails its tool's calls with the reason", async () => {
    const client = await connect("aa");
    await client.listTools();
    await expect(client.callTool({ name: "echoed", arguments: {} })).rejects.toThrow(
      /output schema is refused: .*pattern .* is not supported/u,
    );
  });
});
