// An Agents API agent ⇄ Tether's agent definition (domain/agents.ts), ADR 0037: `instructions`
// is the system prompt, `text.format` json_schema the response format, tools as agent-tools.ts
// maps them; `metadata` and the first version's creation time ride in the stored definition; the
// fields Tether does not act on (`reasoning`, `service_tier`, `text.verbosity`, `compaction`,
// `experimental`) are kept in its `echo` and shown back as written.
import {
  decodeAgentDefinition,
  type AgentDefinition,
  type AgentVersion,
} from "../domain/agents.js";
import type { JsonValue } from "../domain/conversation.js";
import { invalidArgument } from "../domain/errors.js";
import { checkResponseFormat, parseUserSchema, RESPONSE_FORMAT_NAME } from "../runtime/index.js";
import { checkTools, toolsOf, type McpToolBody, type ToolBody } from "./agent-tools.js";

type JsonObject = { [key: string]: JsonValue };

interface TextFormatBody {
  type: "text" | "json_schema";
  name?: string;
  schema?: JsonObject;
}

/** A create body after its schema check (agent-schemas.ts), or a stored agent read back as one. */
export interface AgentBody {
  model?: string | null;
  name?: string | null;
  instructions?: string | null;
  metadata?: Record<string, string> | null;
  tools?: ToolBody[] | null;
  text?: { format?: TextFormatBody | null; verbosity?: string | null } | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  service_tier?: string | null;
  multi_agent?: { enabled: false; max_concurrent_subagents?: number | null } | null;
  compaction?: JsonObject | null;
  experimental?: JsonObject;
}

interface Echo {
  reasoning?: { effort?: string | null; summary?: string | null };
  service_tier?: string;
  verbosity?: string;
  mcp?: McpToolBody[];
  compaction?: JsonObject;
  experimental?: JsonObject;
}

export interface AgentDraftParts {
  displayName: string;
  definition: AgentDefinition;
}

/**
 * A checked body as a definition; `createdAtMs` is the agent's first version's time (undefined
 * for a first version: the store stamps it).
 */
export function definitionOf(
  body: AgentBody,
  mcpServers: ReadonlySet<string>,
  createdAtMs?: number,
): AgentDraftParts {
  if (!body.model) throw invalidArgument("model", "is required");
  const tools = checkTools(body.tools ?? [], mcpServers);
  const format = body.text?.format;
  const echo: Echo = {
    ...(body.reasoning && { reasoning: body.reasoning }),
    ...(body.service_tier && { service_tier: body.service_tier }),
    ...(body.text?.verbosity && { verbosity: body.text.verbosity }),
    ...(tools.mcp.length > 0 && { mcp: tools.mcp }),
    ...(body.compaction && { compaction: body.compaction }),
    ...(body.experimental && { experimental: body.experimental }),
  };
  const definition: AgentDefinition = {
    model: body.model,
    ...(body.instructions && { systemPrompt: body.instructions }),
    clientTools: tools.clientTools,
    ...(tools.serverTools.length > 0 && { serverTools: tools.serverTools }),
    ...(format?.type === "json_schema" && { responseFormat: responseFormatOf(format) }),
    metadata: body.metadata ?? {},
    ...(createdAtMs !== undefined && { createdAtMs }),
    ...(Object.keys(echo).length > 0 && { echo: echo as JsonObject }),
  };
  return { displayName: body.name ?? "", definition };
}

function responseFormatOf(format: TextFormatBody) {
  const field = "text.format";
  if (!format.schema) throw invalidArgument(`${field}.schema`, "is required for json_schema");
  const name = format.name ?? "response";
  if (!RESPONSE_FORMAT_NAME.test(name)) {
    throw invalidArgument(`${field}.name`, "must be 1-64 letters, digits, '_' or '-'");
  }
  const schema = parseUserSchema(JSON.stringify(format.schema), `${field}.schema`);
  checkResponseFormat(schema, `${field}.schema`);
  return { name, schema };
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/** A stored version read back as the body that made it (the base an update's fields replace). */
export function bodyOf(version: AgentVersion): AgentBody {
  const d = decodeAgentDefinition(version.definition);
  const echo = (d.echo ?? {}) as Echo;
  const tools = toolsOf(d.clientTools, echo.mcp ?? []).map((tool) =>
    tool.type === "function"
      ? {
          type: tool.type,
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
        }
      : { type: tool.type, server_label: tool.server_label, allowed_tools: tool.allowed_tools },
  );
  return {
    model: d.model ?? null,
    name: version.displayName || null,
    instructions: d.systemPrompt ?? null,
    metadata: d.metadata ?? {},
    tools,
    text: {
      format: d.responseFormat
        ? { type: "json_schema", name: d.responseFormat.name, schema: d.responseFormat.schema }
        : null,
      verbosity: echo.verbosity ?? null,
    },
    reasoning: echo.reasoning ?? null,
    service_tier: echo.service_tier ?? null,
    compaction: echo.compaction ?? null,
    ...(echo.experimental && { experimental: echo.experimental }),
  };
}

/** The Agent object of the Agents API for a stored version; `id` is the client's agent id. */
export function agentObject(version: AgentVersion, id: string) {
  const d = decodeAgentDefinition(version.definition);
  const echo = (d.echo ?? {}) as Echo;
  return {
    id,
    object: "agent",
    created_at: seconds(d.createdAtMs ?? version.createdAtMs),
    updated_at: seconds(version.createdAtMs),
    name: version.displayName || null,
    instructions: d.systemPrompt ?? null,
    metadata: d.metadata ?? {},
    model: d.model ?? "",
    tools: toolsOf(d.clientTools, echo.mcp ?? []),
    text: {
      format: d.responseFormat
        ? { type: "json_schema", name: d.responseFormat.name, schema: d.responseFormat.schema }
        : { type: "text" },
      // The Agent shows resolved settings: the Python SDK's strict parsing requires a level and
      // a tier (OpenAI's defaults), where a body sent none.
      verbosity: echo.verbosity ?? "medium",
    },
    reasoning: { effort: echo.reasoning?.effort ?? null, summary: echo.reasoning?.summary ?? null },
    service_tier: echo.service_tier ?? "auto",
    multi_agent: { enabled: false, max_concurrent_subagents: null },
    ...(echo.compaction && { compaction: echo.compaction }),
    ...(echo.experimental && { experimental: echo.experimental }),
  };
}
