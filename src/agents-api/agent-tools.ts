// The Agents API's `tools` as Tether runs them (ADR 0037): `function` tools are client tools (the
// turn waits for the client's result); `mcp` tools name a server the operator declared
// (TETHER_MCP_SERVERS) and become server-tool selections; every other type is refused by name.
import type { AgentTool } from "../domain/agents.js";
import type { JsonValue } from "../domain/conversation.js";
import { invalidArgument } from "../domain/errors.js";
import { parseUserSchema } from "../runtime/index.js";
import { bodyCheck } from "./body-check.js";
import { FUNCTION_TOOL, MCP_TOOL } from "./agent-schemas.js";

type JsonObject = { [key: string]: JsonValue };

export interface FunctionToolBody {
  type: "function";
  name: string;
  description?: string | null;
  parameters?: JsonObject | null;
  strict?: boolean | null;
}

export interface McpToolBody {
  type: "mcp";
  server_label: string;
  allowed_tools?: string[] | null;
}

export type ToolBody = FunctionToolBody | McpToolBody | { type: string };

export interface CheckedTools {
  clientTools: AgentTool[];
  serverTools: string[];
  /** The MCP entries as the client wrote them, kept to be shown back. */
  mcp: McpToolBody[];
}

const checkFunction = bodyCheck<FunctionToolBody>(FUNCTION_TOOL);
const checkMcp = bodyCheck<McpToolBody>(MCP_TOOL);

/** How a server tool of an MCP server is named in a selection (src/ports/turn-tools.ts). */
const MAX_SELECTION_NAME = 64;

export function checkTools(
  tools: readonly ToolBody[],
  mcpServers: ReadonlySet<string>,
): CheckedTools {
  const checked: CheckedTools = { clientTools: [], serverTools: [], mcp: [] };
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    const field = `tools[${i}]`;
    if (tool.type === "function") {
      const fn = checkFunction(tool, field);
      if (names.has(fn.name)) throw invalidArgument(`${field}.name`, `duplicates ${fn.name}`);
      names.add(fn.name);
      checked.clientTools.push(clientTool(fn, field));
    } else if (tool.type === "mcp") {
      const mcp = checkMcp(tool, field);
      checked.serverTools.push(...selectionOf(mcp, field, mcpServers));
      checked.mcp.push(mcp);
    } else {
      throw invalidArgument(
        `${field}.type`,
        `"${tool.type}" tools are not served by Tether; use "function" or "mcp"`,
      );
    }
  });
  checked.serverTools = [...new Set(checked.serverTools)];
  return checked;
}

function clientTool(fn: FunctionToolBody, field: string): AgentTool {
  return {
    name: fn.name,
    description: fn.description ?? "",
    // Bounded like every user schema, so nothing downstream recurses past the stack.
    inputSchema: fn.parameters
      ? parseUserSchema(JSON.stringify(fn.parameters), `${field}.parameters`)
      : { type: "object" },
  };
}

function selectionOf(mcp: McpToolBody, field: string, mcpServers: ReadonlySet<string>): string[] {
  if (!mcpServers.has(mcp.server_label)) {
    throw invalidArgument(
      `${field}.server_label`,
      "names no MCP server this deployment declares (TETHER_MCP_SERVERS)",
    );
  }
  if (!mcp.allowed_tools) return [mcp.server_label];
  return mcp.allowed_tools.map((tool, j) => {
    const name = `${mcp.server_label}__${tool}`;
    if (name.length > MAX_SELECTION_NAME) {
      throw invalidArgument(
        `${field}.allowed_tools[${j}]`,
        `with the server label must be at most ${MAX_SELECTION_NAME} characters`,
      );
    }
    return name;
  });
}

/** The tools as the Agent object shows them: client tools first, then the MCP entries. */
export function toolsOf(clientTools: readonly AgentTool[], mcp: readonly McpToolBody[]) {
  return [
    ...clientTools.map((t) => ({
      type: "function" as const,
      name: t.name,
      description: t.description,
      parameters: t.inputSchema,
      defer_loading: false,
    })),
    ...mcp.map((m) => ({
      type: "mcp" as const,
      server_label: m.server_label,
      allowed_tools: m.allowed_tools ?? null,
      connection_origin: "service" as const,
      credential_id: null,
      request_metadata: {},
      required: false,
    })),
  ];
}
