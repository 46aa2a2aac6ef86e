// The JSON Schemas of the Agents API's automation bodies as Tether accepts them (ADR 0037). Fields
// Tether cannot honour are absent, so `additionalProperties: false` refuses them by name; what
// depends on the automation's type (a cron for periodic, `run_at` for once, a target's own
// fields) is checked after the schema by automation-spec.ts, naming the field.
import { FIELDS, METADATA } from "./agent-schemas.js";
import { USER_MESSAGE, type UserMessageBody } from "./session-schemas.js";

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });

/** The inline agent of a new-session target: the agent's own fields without name and metadata. */
const { name: _name, metadata: _metadata, ...INLINE_FIELDS } = FIELDS;

const TARGET = {
  type: "object",
  required: ["type"],
  additionalProperties: false,
  properties: {
    type: { enum: ["new_session", "existing_session"] },
    // existing_session
    session_id: { type: "string", minLength: 1 },
    instructions: { type: "string", minLength: 1, maxLength: 32_768 },
    // new_session
    agent_id: { type: "string", minLength: 1 },
    agent: { type: "object", additionalProperties: false, properties: INLINE_FIELDS },
    // Any environment is read; only `none` is served (its refusal names `target.environment.type`).
    environment: { type: "object", required: ["type"], properties: { type: { type: "string" } } },
    input: { type: "array", minItems: 1, maxItems: 32, items: USER_MESSAGE },
    metadata: nullable(METADATA),
    vault_ids: nullable({ type: "array", items: { type: "string" } }),
  },
};

const NAME = { type: "string", minLength: 1, maxLength: 256 };
const EXPRESSION = { type: "string", minLength: 1, maxLength: 256 };
const TIMEZONE = { type: "string", minLength: 1, maxLength: 64 };
const RUN_AT = { type: "integer", minimum: 1 };

export const AUTOMATION_CREATE = {
  type: "object",
  required: ["type", "name", "target"],
  additionalProperties: false,
  properties: {
    type: { enum: ["periodic", "once"] },
    name: NAME,
    expression: EXPRESSION,
    timezone: TIMEZONE,
    run_at: RUN_AT,
    target: TARGET,
    metadata: nullable(METADATA),
  },
};

/** `automations.update`: every field optional; target and metadata replace the whole field. */
export const AUTOMATION_UPDATE = {
  type: "object",
  additionalProperties: false,
  properties: {
    name: NAME,
    expression: EXPRESSION,
    timezone: TIMEZONE,
    run_at: RUN_AT,
    target: TARGET,
    metadata: nullable(METADATA),
  },
};

export interface TargetBody {
  type: "new_session" | "existing_session";
  session_id?: string;
  instructions?: string;
  agent_id?: string;
  agent?: Record<string, unknown>;
  environment?: { type: string };
  input?: UserMessageBody[];
  metadata?: Record<string, string> | null;
  vault_ids?: string[] | null;
}

export interface AutomationCreateBody {
  type: "periodic" | "once";
  name: string;
  expression?: string;
  timezone?: string;
  run_at?: number;
  target: TargetBody;
  metadata?: Record<string, string> | null;
}

export type AutomationUpdateBody = Partial<Omit<AutomationCreateBody, "type">>;
