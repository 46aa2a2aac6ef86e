// One MCP server as this replica sees it: an SDK client that connects, lists the server's tools
// (again on notifications/tools/list_changed), calls them, and reconnects with backoff (at most
// 5 s between tries) whenever the connection ends; a stdio server that exits is started again by
// the next connect. A server that stops answering is noticed by a ping every few seconds (every
// second while a call is in flight), so a call on a dead connection fails promptly instead of
// waiting out its timeout: closing the client rejects every request still open.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/index.js";
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonValue } from "../domain/conversation.js";
import type { McpServerConfig } from "./config.js";

export type McpServerState = "connecting" | "connected" | "down";

/** A tool of one server, under the name the model sees. */
export interface McpTool {
  name: string;
  /** The name the server knows it by. */
  remoteName: string;
  description: string;
  inputSchema: { [key: string]: JsonValue };
}

export interface McpLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * Compiles a tool's output schema into a check: undefined when a value matches, else why not.
 * Throws when the schema is refused. The composition root passes the runtime's bounded, isolated
 * compiler (ADR 0027); without one the SDK's own Ajv runs server schemas' patterns natively.
 */
export type OutputSchemaCompiler = (schema: {
  [key: string]: JsonValue;
}) => (value: unknown) => string | undefined;

export interface McpConnectionOptions {
  /** Called whenever the state or the tool list changes. */
  onChange: () => void;
  logger: McpLogger;
  outputSchemas?: OutputSchemaCompiler;
  /** Longest wait between connection attempts. */
  maxBackoffMs?: number;
  /** Ping interval while idle, and while a call is in flight. */
  idlePingMs?: number;
  busyPingMs?: number;
}

/** Characters providers accept in a tool name. */
const TOOL_NAME_CHAR = /[^A-Za-z0-9_-]/gu;
const MAX_TOOL_NAME = 64;
const CONNECT_TIMEOUT_MS = 10_000;

/** `<server>__<tool>`, in the characters and length providers accept. */
export function modelToolName(server: string, tool: string): string {
  return `${server}__${tool.replace(TOOL_NAME_CHAR, "_")}`.slice(0, MAX_TOOL_NAME);
}

function transportFor(config: McpServerConfig): Transport {
  const t = config.transport;
  if (t.kind === "http") {
    return new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: t.headers },
    });
  }
  return new StdioClientTransport({
    command: t.command,
    args: t.args,
    // The server gets PATH and the operator's variables, not the replica's secrets.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...t.env },
    stderr: "ignore",
  });
}

/** The SDK's validator seam over `compile`: a refused schema fails its tool's calls, not the list. */
export function schemaValidator(compile: OutputSchemaCompiler): jsonSchemaValidator {
  return {
    getValidator<T>(schema: object) {
      let check: (value: unknown) => string | undefined;
      try {
        check = compile(schema as { [key: string]: JsonValue });
      } catch (error) {
        const reason = `the tool's output schema is refused: ${(error as Error).message}`;
        check = () => reason;
      }
      return (input: unknown) => {
        const reason = check(input);
        return reason === undefined
          ? { valid: true as const, data: input as T, errorMessage: undefined }
          : { valid: false as const, data: undefined, errorMessage: reason };
      };
    },
  };
}

export class McpConnection {
  state: McpServerState = "connecting";
  private client: Client | undefined;
  private listed: McpTool[] = [];
  private stopped = false;
  private inFlight = 0;
  private wake: (() => void) | undefined;
  private readonly loop: Promise<void>;

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {
    this.loop = this.run();
  }

  tools(): readonly McpTool[] {
    return this.state === "connected" ? this.listed : [];
  }

  /** Calls one tool; rejects when the server is unavailable, the call times out or is aborted. */
  async call(
    remoteName: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; meta: Record<string, unknown> },
  ): Promise<CallToolResult> {
    const client = this.client;
    if (this.state !== "connected" || client === undefined) {
      throw new Error(`MCP server ${this.config.name} is unavailable`);
    }
    this.inFlight++;
    this.wake?.();
    try {
      return (await client.callTool(
        { name: remoteName, arguments: args, _meta: options.meta },
        undefined,
        { signal: options.signal, timeout: options.timeoutMs },
      )) as CallToolResult;
    } finally {
      this.inFlight--;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.client?.close().catch(() => undefined);
    await this.loop;
  }

  private setState(state: McpServerState): void {
    if (this.state === state) return;
    this.state = state;
    this.options.onChange();
  }

  private async refreshTools(client: Client): Promise<void> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      for (const tool of page.tools) {
        tools.push({
          name: modelToolName(this.config.name, tool.name),
          remoteName: tool.name,
          description: tool.description ?? "",
          inputSchema: tool.inputSchema as { [key: string]: JsonValue },
        });
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.listed = tools;
    this.options.onChange();
  }

  private async run(): Promise<void> {
    const maxBackoff = this.options.maxBackoffMs ?? 5_000;
    for (let attempt = 0; !this.stopped; attempt++) {
      const compile = this.options.outputSchemas;
      const client = new Client(
        { name: "tether", version: "1" },
        compile && { jsonSchemaValidator: schemaValidator(compile) },
      );
      let closed = false;
      const ended = new Promise<void>((resolve) => {
        client.onclose = () => {
          closed = true;
          resolve();
        };
      });
      try {
        this.setState("connecting");
        await client.connect(transportFor(this.config), { timeout: CONNECT_TIMEOUT_MS });
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          this.refreshTools(client).catch(() => void client.close().catch(() => undefined));
        });
        await this.refreshTools(client);
        this.client = client;
        attempt = -1;
        this.setState("connected");
        this.options.logger.info(
          { mcpServer: this.config.name, tools: this.listed.length },
          "MCP server connected",
        );
        await this.watch(client, () => closed, ended);
      } catch (error) {
        this.options.logger.warn(
          { mcpServer: this.config.name, error: (error as Error).message },
          "MCP server unavailable",
        );
      }
      this.client = undefined;
      this.listed = [];
      await client.close().catch(() => undefined);
      this.setState("down");
      if (this.stopped) break;
      await this.pause(Math.min(maxBackoff, 250 * 2 ** Math.max(0, attempt)));
    }
  }

  /** Until the connection ends: a failed ping ends it on purpose. */
  private async watch(client: Client, isClosed: () => boolean, ended: Promise<void>) {
    while (!this.stopped && !isClosed()) {
      const every =
        this.inFlight > 0 ? (this.options.busyPingMs ?? 1_000) : (this.options.idlePingMs ?? 5_000);
      await Promise.race([this.pause(every), ended]);
      if (this.stopped || isClosed()) return;
      try {
        await client.ping({ timeout: Math.max(1_000, every) });
      } catch {
        this.options.logger.warn({ mcpServer: this.config.name }, "MCP server stopped answering");
        await client.close().catch(() => undefined);
        return;
      }
    }
  }

  /** Sleeps, cut short by stop() or a call starting (which wants the faster ping). */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
