// A stored schedule read as the Agents API's Automation, and its runs as AutomationInvocations
// (ADR 0037, "Automations"). A once automation whose instant has fired (or was missed) and that
// holds no next occurrence is `completed`; a schedule paused by its refusing target shows
// `pause_reason: "target_session_failed"`. An invocation's id is made from its occurrence, so
// the queued invocation a manual POST answers has the id its run later lists under.
import { clientMetadata } from "../domain/agent-binding.js";
import type { InputItem } from "../domain/conversation.js";
import {
  isTargetRefusal,
  MISSED_WHILE_PAUSED,
  parseScheduleSpec,
  type ScheduleRecord,
  type ScheduleRun,
  type ScheduleSpec,
} from "../domain/schedules.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { TenantScope } from "../api/tenancy.js";
import { newSortableId, sortableIdTime } from "./agent-ids.js";
import { agentObject } from "./agent-object.js";
import { AUTOMATION_ID_PREFIX } from "./automation-spec.js";
import { inlineAgentId } from "./session-agent.js";

const seconds = (ms: number) => Math.floor(ms / 1000);

export const newAutomationId = (): string => newSortableId(AUTOMATION_ID_PREFIX);

export type AutomationObject = Record<string, unknown> & { id: string; type: string };

/** The content parts of a stored input (text, or an image by URL). */
function contentOf(input: readonly InputItem[]) {
  return input.map((item) =>
    item.type === "text"
      ? { type: "input_text", text: item.text }
      : {
          type: "input_image",
          image_url: item.image.kind === "url" ? item.image.url : "",
          detail: null,
        },
  );
}

async function targetObject(
  spec: ScheduleSpec,
  automationId: string,
  scope: TenantScope,
  store: Pick<RuntimeStore, "getAgent">,
) {
  const { target } = spec;
  if (target.kind === "session") {
    const text = spec.input.map((item) => (item.type === "text" ? item.text : "")).join("\n");
    return {
      type: "existing_session",
      session_id: scope.toClient(target.sessionId),
      instructions: text,
    };
  }
  const inline = target.clientAgentId === inlineAgentId(automationId);
  const version = inline ? await store.getAgent(target.agentId, target.version) : undefined;
  return {
    type: "new_session",
    agent: version ? agentConfig(agentObject(version, target.clientAgentId)) : null,
    agent_id: inline ? null : target.clientAgentId,
    environment: { type: "none" },
    input: [{ type: "message", role: "user", content: contentOf(spec.input) }],
    metadata: clientMetadata(target.sessionMetadata ?? {}),
    vault_ids: [],
  };
}

/** The inline agent as AutomationAgentConfig: the agent's fields without its identity. */
function agentConfig(agent: ReturnType<typeof agentObject>) {
  const {
    id: _id,
    object: _o,
    created_at: _c,
    updated_at: _u,
    name: _n,
    metadata: _m,
    ...rest
  } = agent;
  return rest;
}

export function statusOf(record: ScheduleRecord, spec: ScheduleSpec): string {
  if (record.paused) return "paused";
  return spec.timing.kind === "at" && record.nextFireAt === undefined ? "completed" : "active";
}

export async function automationObject(
  record: ScheduleRecord,
  scope: TenantScope,
  store: Pick<RuntimeStore, "getAgent">,
): Promise<AutomationObject> {
  const spec = parseScheduleSpec(record.spec);
  const id = record.scheduleId;
  const common = {
    id,
    object: "agent.automation",
    created_at: seconds(sortableIdTime(AUTOMATION_ID_PREFIX, id) ?? 0),
    created_by: { type: "developer" },
    metadata: spec.metadata ?? {},
    name: spec.name ?? id,
    status: statusOf(record, spec),
    pause_reason:
      record.paused && isTargetRefusal(record.pausedReason) ? "target_session_failed" : null,
    target: await targetObject(spec, id, scope, store),
  };
  const { timing } = spec;
  return timing.kind === "at"
    ? { ...common, type: "once", run_at: seconds(timing.at) }
    : { ...common, type: "periodic", expression: timing.cron, timezone: timing.timezone };
}

/** `inv_m<ms>` for a manual invocation, `inv_s<ms>` for a scheduled one: ms is the occurrence. */
export const invocationId = (manual: boolean, scheduledAt: number): string =>
  `inv_${manual ? "m" : "s"}${scheduledAt}`;

export function parseInvocationId(id: string): { manual: boolean; at: number } | undefined {
  const found = /^inv_([ms])(\d{1,16})$/u.exec(id);
  if (!found) return undefined;
  return { manual: found[1] === "m", at: Number(found[2]) };
}

/** How a run reads as an invocation's status, skip reason and error. */
function outcomeOf(run: ScheduleRun) {
  if (run.skipReason !== undefined) {
    const message =
      run.skipReason === MISSED_WHILE_PAUSED
        ? "the occurrence passed while the automation was paused"
        : run.skipReason;
    return { status: "skipped", skip_reason: null, error: { code: run.skipReason, message } };
  }
  if (run.errorKind === "target_busy") {
    return { status: "skipped", skip_reason: "pending_delivery", error: null };
  }
  if (run.error !== undefined) {
    const message = run.error;
    return {
      status: "failed",
      skip_reason: null,
      error: { code: "target_session_failed", message },
    };
  }
  return { status: "completed", skip_reason: null, error: null };
}

export function invocationObject(
  run: ScheduleRun,
  automation: AutomationObject,
): Record<string, unknown> {
  const manual = run.manual === true;
  return {
    id: invocationId(manual, run.scheduledAt),
    object: "agent.automation.invocation",
    automation_id: automation.id,
    created_at: seconds(manual ? run.scheduledAt : run.firedAt),
    scheduled_at: manual ? null : seconds(run.scheduledAt),
    session_id: run.sessionId === "" ? null : run.sessionId,
    source: manual ? { type: "manual" } : { type: "automation", automation },
    ...outcomeOf(run),
  };
}

/** A run-now not yet settled: the manual invocation, queued. */
export function queuedInvocation(
  requestedAt: number,
  record: ScheduleRecord,
  automation: AutomationObject,
  scope: TenantScope,
): Record<string, unknown> {
  const { target } = parseScheduleSpec(record.spec);
  return {
    id: invocationId(true, requestedAt),
    object: "agent.automation.invocation",
    automation_id: automation.id,
    created_at: seconds(requestedAt),
    scheduled_at: null,
    session_id: target.kind === "session" ? scope.toClient(target.sessionId) : null,
    source: { type: "manual" },
    status: "queued",
    skip_reason: null,
    error: null,
  };
}
