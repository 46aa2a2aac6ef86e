// MCP server configuration: every unusable entry stops the server before it listens, with a
// message naming the variable, the entry (by name, or by index without one) and the field.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { parseMcpServers, redactedServer } from "../../../src/mcp/config.js";
import { ConfigError, loadConfig } from "../../../src/server/config.js";

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("MCP server configuration", () => {
  test("none by default; http and stdio entries with their fields", () => {
    expect(loadConfig({}).mcpServers).toEqual([]);
    expect(loadConfig({}).mcpCallTimeoutMs).toBe(60_000);
    const servers = parseMcpServers(
      JSON.stringify([
        { name: "files", url: "http://127.0.0.1:9000/mcp", headers: { Authorization: "Bearer x" } },
        { name: "everything", command: "node", args: ["srv.js"], env: { K: "v" }, timeoutMs: 500 },
      ]),
    );
    expect(servers).toEqual([
      {
        name: "files",
        transport: {
          kind: "http",
          url: "http://127.0.0.1:9000/mcp",
          headers: { Authorization: "Bearer x" },
        },
        timeoutMs: undefined,
      },
      {
        name: "everything",
        transport: { kind: "stdio", command: "node", args: ["srv.js"], env: { K: "v" } },
        timeoutMs: 500,
      },
    ]);
  });

  test.each([
    ["not json", "TETHER_MCP_SERVERS: not JSON"],
    ['{"name":"a"}', "must be a JSON array"],
    ['[{"url":"http://h/mcp"}]', "entry 0: name"],
    ['[{"name":"a__b","url":"http://h/mcp"}]', 'entry "a__b": name'],
    ['[{"name":"a"}]', 'entry "a": needs exactly one of url (Streamable HTTP) or command'],
    ['[{"name":"a","url":"http://h","command":"x"}]', 'entry "a": needs exactly one'],
    ['[{"name":"a","url":"ftp://h"}]', 'entry "a": url'],
    ['[{"name":"a","command":"x","args":[1]}]', 'entry "a": args'],
    ['[{"name":"a","url":"http://h","headers":{"k":1}}]', 'entry "a": headers'],
    ['[{"name":"a","command":"x","timeoutMs":0}]', 'entry "a": timeoutMs'],
    ['[{"name":"a","command":"x","colour":"red"}]', 'entry "a": unknown field colour'],
    ['[{"name":"a","command":"x"},{"name":"a","url":"http://h"}]', 'entry "a": name is used'],
  ])("%s is refused naming the entry and field", (json, message) => {
    expect(refusal({ TETHER_MCP_SERVERS: json })).toContain(message);
  });

  test("a configuration file holds the same array; a missing one is refused", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tether-mcp-"));
    try {
      const file = join(dir, "mcp.json");
      await writeFile(file, JSON.stringify([{ name: "x", command: "node" }]));
      expect(loadConfig({ TETHER_MCP_CONFIG_FILE: file }).mcpServers[0]?.name).toBe("x");
      expect(refusal({ TETHER_MCP_CONFIG_FILE: join(dir, "none.json") })).toContain(
        "TETHER_MCP_CONFIG_FILE: cannot read",
      );
      expect(refusal({ TETHER_MCP_CONFIG_FILE: file, TETHER_MCP_SERVERS: "[]" })).toContain(
        "not both",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a value {"env": NAME} comes from that variable; an unset one is refused', () => {
    const json = JSON.stringify([
      { name: "h", url: "http://h/mcp", headers: { Authorization: { env: "H_TOKEN" } } },
    ]);
    const [server] = loadConfig({ TETHER_MCP_SERVERS: json, H_TOKEN: "Bearer t" }).mcpServers;
    expect(server?.transport).toMatchObject({ headers: { Authorization: "Bearer t" } });
    expect(refusal({ TETHER_MCP_SERVERS: json })).toContain(
      'entry "h": headers.Authorization names H_TOKEN, which is not set',
    );
  });

  test("header and environment values are redacted for logs", () => {
    const [http, stdio] = parseMcpServers(
      JSON.stringify([
        { name: "h", url: "http://h/mcp", headers: { Authorization: "Bearer secret" } },
        { name: "s", command: "node", env: { TOKEN: "secret" } },
      ]),
    );
    const shown = JSON.stringify([redactedServer(http!), redactedServer(stdio!)]);
    expect(shown).not.toContain("secret");
    expect(shown).toContain("Authorization");
    expect(shown).toContain("TOKEN");
  });
});
