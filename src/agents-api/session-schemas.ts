// The JSON Schemas of the Agents API's session bodies as Tether accepts them (ADR 0037). As for
// agents, fields Tether cannot honour are absent, so `additionalProperties: false` refuses them by
// name; what needs its own words (a hosted environment, vaults, `stream_options` without a
// stream) is refused after the schema, by session-routes.ts.
import { FIELDS, METADATA } from "./agent-schemas.js";
import type { InputContentPart } from "./event-schemas.js";

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });

const INPUT_PART = {
  type: "object",
  required: ["type"],
  additionalProperties: false,
  properties: {
    type: { enum: ["input_text", "input_image"] },
    text: { type: "string" },
    image_url: { type: "string" },
    detail: { type: ["string", "null"] },
  },
};

export const USER_MESSAGE = {
  type: "object",
  required: ["role", "content"],
  additionalProperties: false,
  properties: {
    role: { const: "user" },
    type: { const: "message" },
    content: { anyOf: [{ type: "string" }, { type: "array", maxItems: 256, items: INPUT_PART }] },
  },
};

/** The inline agent of a create: the agent's own fields without its name and metadata. */
const { name: _name, metadata: _metadata, ...INLINE_FIELDS } = FIELDS;

export const SESSION_CREATE = {
  type: "object",
  additionalProperties: false,
  properties: {
    agent_id: { type: "string", minLength: 1 },
    agent: { type: "object", additionalProperties: false, properties: INLINE_FIELDS },
    // Any environment is read; only `none` is served (its refusal names `environment.type`).
    environment: { type: "object", required: ["type"], properties: { type: { type: "string" } } },
    input: {
      anyOf: [{ type: "string" }, { type: "array", maxItems: 256, items: USER_MESSAGE }],
    },
    metadata: nullable(METADATA),
    stream: { type: ["boolean", "null"] },
    // Tether pads no event, so `include_obfuscation` is read and has nothing to turn off.
    stream_options: nullable({
      type: "object",
      additionalProperties: false,
      properties: { include_obfuscation: { type: "boolean" } },
    }),
    vault_ids: nullable({ type: "array", items: { type: "string" } }),
  },
};

/** What `sessions.update` offers: the session's metadata, and agent fields (a new version). */
export const SESSION_UPDATE = {
  type: "object",
  additionalProperties: false,
  properties: {
    metadata: nullable(METADATA),
    agent: nullable({
      type: "object",
      additionalProperties: false,
      properties: {
        model: FIELDS.model,
        instructions: FIELDS.instructions,
        tools: FIELDS.tools,
        text: FIELDS.text,
        reasoning: FIELDS.reasoning,
        service_tier: FIELDS.service_tier,
      },
    }),
  },
};

export type UserMessageBody = {
  role: "user";
  type?: "message";
  content: string | InputContentPart[];
};

export interface SessionCreateBody {
  agent_id?: string;
  agent?: Record<string, unknown>;
  environment?: { type: string };
  input?: string | UserMessageBody[];
  metadata?: Record<string, string> | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
  vault_ids?: string[] | null;
}

export interface SessionUpdateBody {
  metadata?: Record<string, string> | null;
  agent?: Record<string, unknown> | null;
}
