// The configured MCP servers behind the ToolExecutor port. A turn offers the tools its options
// select (`server_tools`: server names or `<server>__<tool>` names; none by default); a call runs
// on its server with the turn's abort signal (the SDK sends notifications/cancelled), the server's
// timeout, and the call's idempotency key in `_meta`. Results become text for the model: text
// and structured content as they are, images and resources as references.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonValue } from "../domain/conversation.js";
import type { ToolDefinition, ToolExecutor, ToolResult } from "../ports/tool-executor.js";
import type { SelectableTools } from "../ports/turn-tools.js";
import type { McpServerConfig } from "./config.js";
import {
  McpConnection,
  type McpLogger,
  type McpServerState,
  type OutputSchemaCompiler,
} from "./connection.js";

/** Where the idempotency key travels in a call's `_meta`. */
export const IDEMPOTENCY_META_KEY = "tether.dev/idempotency-key";

export interface McpHub extends SelectableTools {
  states(): { name: string; state: McpServerState }[];
  /** Called on every connection or tool list change. */
  onChange(listener: () => void): void;
  close(): Promise<void>;
}

export interface McpHubOptions {
  servers: readonly McpServerConfig[];
  callTimeoutMs: number;
  logger: McpLogger;
  maxBackoffMs?: number;
  /** Compiles tools' output schemas (connection.ts). */
  outputSchemas?: OutputSchemaCompiler;
}

/** One content block as the model reads it. */
function contentText(block: CallToolResult["content"][number]): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
    case "resource_link":
      return `[resource ${block.uri}${block.name ? ` (${block.name})` : ""}]`;
    case "resource":
      return "text" in block.resource && typeof block.resource.text === "string"
        ? block.resource.text
        : `[resource ${block.resource.uri}]`;
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

export function resultFromMcp(result: CallToolResult): ToolResult {
  const texts = (result.content ?? []).map(contentText);
  let output: JsonValue = texts.join("\n");
  if (result.structuredContent !== undefined && texts.length === 0) {
    output = result.structuredContent as JsonValue;
  }
  return { output, isError: result.isError === true };
}

export function createMcpHub(options: McpHubOptions): McpHub {
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };
  const connections = options.servers.map(
    (config) =>
      new McpConnection(config, {
        onChange: changed,
        logger: options.logger,
        ...(options.maxBackoffMs !== undefined && { maxBackoffMs: options.maxBackoffMs }),
        ...(options.outputSchemas && { outputSchemas: options.outputSchemas }),
      }),
  );
  const byName = new Map(connections.map((c) => [c.config.name, c]));

  return {
    forTurn(selection, keyOf) {
      const wanted = new Set(selection);
      const unavailable: string[] = [];
      const chosen = new Map<string, { connection: McpConnection; remoteName: string }>();
      const definitions: ToolDefinition[] = [];
      for (const connection of connections) {
        const server = connection.config.name;
        const whole = wanted.has(server);
        const some = [...wanted].some((w) => w.startsWith(`${server}__`));
        if (!whole && !some) continue;
        if (connection.state !== "connected") {
          unavailable.push(server);
          continue;
        }
        for (const tool of connection.tools()) {
          if (!whole && !wanted.has(tool.name)) continue;
          chosen.set(tool.name, { connection, remoteName: tool.remoteName });
          definitions.push({
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
          });
        }
      }
      const executor: ToolExecutor = {
        definitions: () => definitions,
        async execute(call, context) {
          const target = chosen.get(call.toolName);
          if (!target) throw new Error(`no MCP tool named ${call.toolName}`);
          const args =
            call.arguments !== null &&
            typeof call.arguments === "object" &&
            !Array.isArray(call.arguments)
              ? call.arguments
              : {};
          const result = await target.connection.call(target.remoteName, args, {
            signal: context.signal,
            timeoutMs: target.connection.config.timeoutMs ?? options.callTimeoutMs,
            meta: { [IDEMPOTENCY_META_KEY]: keyOf(call.callId) },
          });
          return resultFromMcp(result);
        },
      };
      return { executor, unavailable };
    },
    serverOf(toolName) {
      const at = toolName.indexOf("__");
      return at > 0 && byName.has(toolName.slice(0, at)) ? toolName.slice(0, at) : undefined;
    },
    states: () => connections.map((c) => ({ name: c.config.name, state: c.state })),
    onChange(listener) {
      listeners.add(listener);
    },
    async close() {
      await Promise.all(connections.map((c) => c.stop()));
    },
  };
}
