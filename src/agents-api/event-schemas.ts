// The body of POST /v1/agents/sessions/{id}/events as JSON Schema (ADR 0037): checked once, the
// first refusal a 400 naming the field (`events[0].type`). An event's `type` picks its shape, so
// a refusal names the field of the kind the client meant rather than every kind's.

const INPUT_TEXT = {
  type: "object",
  required: ["type", "text"],
  additionalProperties: false,
  properties: { type: { const: "input_text" }, text: { type: "string" } },
};

const INPUT_IMAGE = {
  type: "object",
  required: ["type", "image_url"],
  additionalProperties: false,
  properties: {
    type: { const: "input_image" },
    image_url: { type: "string", minLength: 1 },
    detail: { enum: ["auto", "low", "high"] },
  },
};

const CONTENT_PART = {
  type: "object",
  required: ["type"],
  properties: { type: { enum: ["input_text", "input_image"] } },
  if: { properties: { type: { const: "input_text" } } },
  then: INPUT_TEXT,
  else: INPUT_IMAGE,
};

const USER_MESSAGE = {
  type: "object",
  required: ["role", "content"],
  additionalProperties: false,
  properties: {
    role: { const: "user" },
    type: { const: "message" },
    content: { type: "array", minItems: 1, maxItems: 256, items: CONTENT_PART },
  },
};

const MESSAGE = {
  type: "object",
  required: ["type", "input"],
  additionalProperties: false,
  properties: {
    type: { const: "agent.session.input.message" },
    input: { type: "array", minItems: 1, maxItems: 64, items: USER_MESSAGE },
  },
};

const CANCEL = {
  type: "object",
  required: ["type"],
  additionalProperties: false,
  properties: { type: { const: "agent.session.input.cancel" } },
};

const CALL_ID = { type: "string", minLength: 1, maxLength: 256 };

const TOOL_RESULT = {
  type: "object",
  required: ["type", "turn_id", "call_id", "success"],
  additionalProperties: false,
  properties: {
    type: { const: "agent.session.input.tool_result" },
    turn_id: CALL_ID,
    call_id: CALL_ID,
    success: { type: "boolean" },
    output: {
      anyOf: [{ type: "null" }, { type: "string" }, { type: "array", items: CONTENT_PART }],
    },
    error: { type: ["string", "null"] },
  },
};

const APPROVAL = {
  type: "object",
  required: ["type", "request_id", "response"],
  additionalProperties: false,
  properties: {
    type: { const: "agent.session.input.mcp_approval_request_result" },
    request_id: CALL_ID,
    response: {
      type: "object",
      required: ["type", "decision"],
      additionalProperties: false,
      properties: {
        type: { const: "mcp_tool_call" },
        decision: { enum: ["approve", "deny", "cancel"] },
      },
    },
  },
};

const KINDS: Record<string, object> = {
  "agent.session.input.message": MESSAGE,
  "agent.session.input.cancel": CANCEL,
  "agent.session.input.tool_result": TOOL_RESULT,
  "agent.session.input.mcp_approval_request_result": APPROVAL,
};

/** One event: its `type` first (one Tether serves), then that kind's shape. */
const INPUT_EVENT = {
  type: "object",
  required: ["type"],
  properties: { type: { enum: Object.keys(KINDS) } },
  allOf: Object.entries(KINDS).map(([kind, schema]) => ({
    if: { properties: { type: { const: kind } } },
    then: schema,
  })),
};

/** The most events one request may carry. */
export const MAX_EVENTS = 64;

export const EVENTS_CREATE = {
  type: "object",
  required: ["events"],
  additionalProperties: false,
  properties: { events: { type: "array", minItems: 1, maxItems: MAX_EVENTS, items: INPUT_EVENT } },
};

export interface InputContentPart {
  type: "input_text" | "input_image";
  text?: string;
  image_url?: string;
}

export type InputEvent =
  | {
      type: "agent.session.input.message";
      input: { role: "user"; type?: "message"; content: InputContentPart[] }[];
    }
  | { type: "agent.session.input.cancel" }
  | {
      type: "agent.session.input.tool_result";
      turn_id: string;
      call_id: string;
      success: boolean;
      output?: string | InputContentPart[] | null;
      error?: string | null;
    }
  | {
      type: "agent.session.input.mcp_approval_request_result";
      request_id: string;
      response: { type: "mcp_tool_call"; decision: "approve" | "deny" | "cancel" };
    };

export interface EventsBody {
  events: InputEvent[];
}
