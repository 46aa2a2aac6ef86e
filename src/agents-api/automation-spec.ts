// An automation body as a schedule spec (ADR 0037, "Automations"): periodic is a 5-field cron in
// an IANA zone, once is one instant (`run_at`, seconds); an existing-session target fires its
// `instructions` into that session, a new-session target fires `input` into a new session of an
// agent (named, or the inline one written as the hidden agent `inline_<automation id>`, as a door
// session's inline agent is). Refusals name the field as the body has it.
import { bindingOf, checkClientMetadata } from "../domain/agent-binding.js";
import type { InputItem } from "../domain/conversation.js";
import { invalidArgument, isTetherError } from "../domain/errors.js";
import { checkTiming } from "../domain/schedule-timing.js";
import type { ScheduleSpec, ScheduleTarget, ScheduleTiming } from "../domain/schedules.js";
import type { SpecDraft } from "../api/schedule-actions.js";
import type { TenantScope } from "../api/tenancy.js";
import type { AgentBody } from "./agent-object.js";
import type { AutomationCreateBody, TargetBody } from "./automation-schemas.js";
import { inputItemsOf } from "./event-inputs.js";
import { createBinding, type SessionAgentDeps } from "./session-agent.js";

export const AUTOMATION_ID_PREFIX = "auto_";

/**
 * An existing session gets each fire as a queued turn of its own (busy strategy `enqueue`): the
 * notification is never dropped nor mixed into the work of a turn already running, which is what
 * steering would do; the turn runs as soon as the session is free.
 */
const EXISTING_SESSION_BUSY = "enqueue";

/** The cron or the instant; refusals name `expression`, `timezone` or `run_at`. */
export function timingOf(
  type: "periodic" | "once",
  fields: { expression?: string | undefined; timezone?: string | undefined; run_at?: number },
  nowMs: number,
): ScheduleTiming {
  if (type === "once") {
    if (fields.expression !== undefined) {
      throw invalidArgument("expression", "is only for a periodic automation");
    }
    if (fields.timezone !== undefined) {
      throw invalidArgument("timezone", "is only for a periodic automation");
    }
    if (fields.run_at === undefined) throw invalidArgument("run_at", "is required");
    return { kind: "at", at: futureInstant(fields.run_at, nowMs) };
  }
  if (fields.run_at !== undefined) throw invalidArgument("run_at", "is only for a once automation");
  if (fields.expression === undefined) throw invalidArgument("expression", "is required");
  if (fields.timezone === undefined) throw invalidArgument("timezone", "is required");
  const timing = {
    kind: "cron" as const,
    cron: fields.expression.trim(),
    timezone: fields.timezone,
  };
  try {
    return checkTiming(timing);
  } catch (error) {
    const [violation] = isTetherError(error, "invalid_argument") ? error.violations : [];
    if (!violation) throw error;
    const field = violation.field === "cron" ? "expression" : violation.field;
    throw invalidArgument(field, violation.description);
  }
}

/** `run_at` (Unix seconds) as epoch ms; the Agents API takes a future one only. */
export function futureInstant(runAt: number, nowMs: number): number {
  const at = runAt * 1000;
  if (!Number.isSafeInteger(at) || at <= nowMs) {
    throw invalidArgument("run_at", "must be a future Unix timestamp in seconds");
  }
  return at;
}

export interface TargetDeps extends SessionAgentDeps {
  scope: TenantScope;
  /** The automation's id: its inline agent is `inline_<id>`. */
  automationId: string;
}

/** A target body as the schedule's target and fired input. */
export async function targetOf(
  body: TargetBody,
  deps: TargetDeps,
): Promise<{ target: ScheduleTarget; input: InputItem[] }> {
  if (body.type === "existing_session") {
    only(body, ["session_id", "instructions"]);
    if (body.session_id === undefined) throw invalidArgument("target.session_id", "is required");
    if (body.instructions === undefined) {
      throw invalidArgument("target.instructions", "is required");
    }
    return {
      target: {
        kind: "session",
        sessionId: deps.scope.toStore(body.session_id, "target.session_id"),
        busyStrategy: EXISTING_SESSION_BUSY,
      },
      input: [{ type: "text", text: body.instructions }],
    };
  }
  only(body, ["agent_id", "agent", "environment", "input", "metadata", "vault_ids"]);
  refuseUnserved(body);
  if (body.input === undefined) throw invalidArgument("target.input", "is required");
  if (body.agent_id !== undefined && body.agent !== undefined) {
    throw invalidArgument("target.agent_id", "give agent or agent_id, not both");
  }
  const input = inputOf(body.input);
  const metadata = body.metadata ?? {};
  checkTargetMetadata(metadata);
  const agent = body.agent as AgentBody | undefined;
  if (!agent) {
    if (body.agent_id === undefined) {
      throw invalidArgument("target.agent_id", "is required without an inline agent");
    }
    const agentId = deps.scope.toStore(body.agent_id, "target.agent_id");
    // No version: each fire runs the agent's latest version, as a new session would.
    const target = { kind: "agent" as const, agentId, clientAgentId: body.agent_id };
    return { target: { ...target, sessionMetadata: metadata }, input };
  }
  const patch = await underTarget(() =>
    createBinding(deps, deps.scope, deps.automationId, undefined, agent),
  );
  const pin = bindingOf(patch);
  if (!pin) throw invalidArgument("target.agent", "could not be written");
  return {
    target: {
      kind: "agent",
      agentId: pin.agentId,
      clientAgentId: deps.scope.toClient(pin.agentId),
      version: pin.version,
      sessionMetadata: metadata,
    },
    input,
  };
}

/** The spec as stored, and its canonical JSON (fixed key order). */
export function draftOf(
  body: Pick<AutomationCreateBody, "name" | "metadata">,
  timing: ScheduleTiming,
  target: { target: ScheduleTarget; input: InputItem[] },
): SpecDraft {
  const metadata = body.metadata ?? {};
  checkClientMetadata(metadata);
  const spec: ScheduleSpec = {
    target: target.target,
    timing,
    input: target.input,
    catchUp: "one",
    name: body.name,
    metadata,
  };
  return { spec, json: JSON.stringify(spec) };
}

/** A target's fields of the other target type are refused by name. */
function only(body: TargetBody, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (key !== "type" && !allowed.includes(key)) {
      throw invalidArgument(`target.${key}`, `is not a field of a ${body.type} target`);
    }
  }
}

function refuseUnserved(body: TargetBody): void {
  const type = body.environment?.type;
  if (type === undefined) throw invalidArgument("target.environment", "is required");
  if (type !== "none") {
    throw invalidArgument(
      "target.environment.type",
      `"${type}" is not served: Tether hosts no environments; use "none"`,
    );
  }
  if (body.vault_ids && body.vault_ids.length > 0) {
    throw invalidArgument("target.vault_ids", "vaults are not served by Tether: leave it empty");
  }
}

function checkTargetMetadata(metadata: Record<string, string>): void {
  underTarget(() => checkClientMetadata(metadata));
}

/** Every message's parts, in order; a schedule takes image URLs, not inline data. */
function inputOf(messages: NonNullable<TargetBody["input"]>): InputItem[] {
  const parts = messages.map((m) => ({
    content:
      typeof m.content === "string"
        ? [{ type: "input_text" as const, text: m.content }]
        : m.content,
  }));
  const items = underTarget(() => inputItemsOf(parts, "target"));
  items.forEach((item, i) => {
    // Stored as JSON and shown back: image bytes would bloat both, a URL does not.
    if (item.type === "image" && item.image.kind === "inline") {
      throw invalidArgument(`target.input[${i}]`, "an automation takes image URLs, not data: URLs");
    }
  });
  return items;
}

/** Refusals of the agent and metadata checks name the field under `target`. */
function underTarget<T>(make: () => T): T {
  let result: T;
  try {
    result = make();
  } catch (error) {
    throw renamed(error);
  }
  if (result instanceof Promise)
    return result.catch((error: unknown) => {
      throw renamed(error);
    }) as T;
  return result;
}

function renamed(error: unknown): unknown {
  const [violation] = isTetherError(error, "invalid_argument") ? error.violations : [];
  if (!violation || violation.field.startsWith("target")) return error;
  return invalidArgument(`target.${violation.field}`, violation.description);
}
