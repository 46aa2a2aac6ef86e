// The JSON Schemas of the Agents API's agent bodies as Tether accepts them (ADR 0037). Fields
// Tether cannot honour are absent, so `additionalProperties: false` refuses them by name.
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });

const TOOL_NAME = "^[A-Za-z0-9_-]{1,64}$";

export const METADATA = {
  type: "object",
  maxProperties: 16,
  propertyNames: { maxLength: 64 },
  additionalProperties: { type: "string", maxLength: 512 },
};

const TEXT = {
  type: "object",
  additionalProperties: false,
  properties: {
    format: nullable({
      type: "object",
      required: ["type"],
      additionalProperties: false,
      properties: {
        type: { enum: ["text", "json_schema"] },
        name: { type: "string" },
        schema: { type: "object" },
        strict: { type: ["boolean", "null"] },
        description: { type: ["string", "null"] },
      },
    }),
    verbosity: { enum: ["low", "medium", "high", null] },
  },
};

const REASONING = {
  type: "object",
  additionalProperties: false,
  properties: {
    effort: { enum: ["none", "minimal", "low", "medium", "high", "xhigh", "max", null] },
    summary: { enum: ["concise", "detailed", "auto", null] },
  },
};

const MULTI_AGENT = {
  type: "object",
  required: ["enabled"],
  additionalProperties: false,
  properties: {
    // Tether runs no subagents: only `false` is true to what it serves.
    enabled: { const: false },
    max_concurrent_subagents: { type: ["integer", "null"] },
  },
};

export const FIELDS = {
  model: { type: "string", minLength: 1, maxLength: 256 },
  name: nullable({ type: "string", maxLength: 200 }),
  instructions: nullable({ type: "string" }),
  metadata: nullable(METADATA),
  tools: nullable({
    type: "array",
    maxItems: 128,
    items: { type: "object", required: ["type"], properties: { type: { type: "string" } } },
  }),
  text: nullable(TEXT),
  reasoning: nullable(REASONING),
  service_tier: { enum: ["auto", "default", "flex", "priority", "fast", "ultrafast", null] },
  multi_agent: nullable(MULTI_AGENT),
  compaction: nullable({
    type: "object",
    additionalProperties: false,
    properties: { async: { type: ["boolean", "null"] } },
  }),
  experimental: {
    type: "object",
    additionalProperties: false,
    properties: { time_awareness: { type: "boolean" } },
  },
};

export const AGENT_CREATE = {
  type: "object",
  required: ["model"],
  additionalProperties: false,
  properties: FIELDS,
};

/** Every field optional; `null` clears it (the model cannot be cleared: checked after merging). */
export const AGENT_UPDATE = {
  type: "object",
  additionalProperties: false,
  properties: { ...FIELDS, model: nullable(FIELDS.model) },
};

export const FUNCTION_TOOL = {
  type: "object",
  required: ["type", "name"],
  additionalProperties: false,
  properties: {
    type: { const: "function" },
    name: { type: "string", pattern: TOOL_NAME },
    description: { type: ["string", "null"], maxLength: 4096 },
    parameters: { type: ["object", "null"] },
    strict: { type: ["boolean", "null"] },
    // Tether's client tools always wait for their result and are always offered.
    async: { enum: [false, null] },
    defer_loading: { enum: [false, null] },
  },
};

/** An operator-declared server only: no inline transport, credentials or headers. */
export const MCP_TOOL = {
  type: "object",
  required: ["type", "server_label"],
  additionalProperties: false,
  properties: {
    type: { const: "mcp" },
    server_label: { type: "string", pattern: TOOL_NAME },
    allowed_tools: nullable({
      type: "array",
      maxItems: 128,
      items: { type: "string", pattern: TOOL_NAME },
    }),
  },
};
