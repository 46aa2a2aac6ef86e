// The Agents API's automation endpoints (ADR 0037, "Automations"): create, retrieve, update, list,
// delete, pause and resume, over the schedule actions ScheduleService calls too
// (src/api/schedule-actions.ts), so an automation is a schedule: it fires exactly once per
// occurrence across replicas (ADR 0020). Door-made automations get server ids `auto_…` that sort
// newest first; any other schedule of the tenant (made over gRPC) is reachable by its own id.
import { invalidArgument, isTetherError, TetherError } from "../domain/errors.js";
import {
  parseScheduleSpec,
  type ScheduleRecord,
  type ScheduleRef,
  type ScheduleTiming,
} from "../domain/schedules.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { ScheduleActions } from "../api/schedule-actions.js";
import { checkScheduleId } from "../api/convert/schedules.js";
import type { TenantScope } from "../api/tenancy.js";
import { bodyCheck } from "./body-check.js";
import { createIdOf, type KeyedCreates } from "./idempotent-create.js";
import { listPage, pageQueryOf, type PageQuery } from "./cursor-page.js";
import type { Call, RouteTable } from "./route-table.js";
import { automationObject, newAutomationId } from "./automation-object.js";
import {
  AUTOMATION_CREATE,
  AUTOMATION_UPDATE,
  type AutomationCreateBody,
  type AutomationUpdateBody,
} from "./automation-schemas.js";
import {
  AUTOMATION_ID_PREFIX,
  draftOf,
  futureInstant,
  targetOf,
  timingOf,
} from "./automation-spec.js";
import { checkClientMetadata } from "../domain/agent-binding.js";
import { inlineAgentId } from "./session-agent.js";

const checkCreate = bodyCheck<AutomationCreateBody>(AUTOMATION_CREATE);
const checkUpdate = bodyCheck<AutomationUpdateBody>(AUTOMATION_UPDATE);
/** Schedules read per step of a list. */
const STEP = 100;

export interface AutomationRoutesDeps {
  actions: ScheduleActions;
  store: RuntimeStore;
  mcpServers: ReadonlySet<string>;
  /** Where a create's or a manual invocation's Idempotency-Key is kept. */
  keys: KeyedCreates;
}

/** The automation a call names, with "not found" in the door's words. */
export function automationRef(call: Call): ScheduleRef {
  const id = call.params.automation_id ?? "";
  try {
    return { tenant: call.scope.tenant, scheduleId: checkScheduleId(id) };
  } catch {
    throw invalidArgument("automation_id", "is not an automation id");
  }
}

/** Runs `action`, saying "automation" where the schedule actions say "schedule". */
export async function asAutomation<T>(id: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (!isTetherError(error, "schedule_not_found")) throw error;
    throw new TetherError("schedule_not_found", `automation ${id} does not exist`, {
      fields: { scheduleId: id },
    });
  }
}

/** The schedule `ref` names, or undefined when there is none. */
export async function findSchedule(
  actions: ScheduleActions,
  ref: ScheduleRef,
): Promise<ScheduleRecord | undefined> {
  try {
    return await actions.get(ref);
  } catch (error) {
    if (isTetherError(error, "schedule_not_found")) return undefined;
    throw error;
  }
}

export function addAutomationRoutes(routes: RouteTable, deps: AutomationRoutesDeps): void {
  const { actions, store } = deps;
  const shown = (record: ScheduleRecord, scope: TenantScope) =>
    automationObject(record, scope, store);
  const targetDeps = (scope: TenantScope, automationId: string) => ({
    store,
    mcpServers: deps.mcpServers,
    scope,
    automationId,
  });

  routes.add("POST", "/v1/agents/automations", async (call) => {
    const body = checkCreate(call.body);
    const { id, first } = await createIdOf(deps.keys, call, "automations.create", newAutomationId);
    const ref = { tenant: call.scope.tenant, scheduleId: id };
    // A retry under its key answers with the automation as it is now (its first answer's id), and
    // makes it when the first attempt stopped short of it: every step below is idempotent on the id
    // (the inline agent is its version 1, the schedule's create replays on the same spec).
    const made = first ? undefined : await findSchedule(actions, ref);
    if (made) return { status: 200, body: await shown(made, call.scope) };
    const timing = timingOf(body.type, body, actions.nowMs());
    checkClientMetadata(body.metadata ?? {});
    const target = await targetOf(body.target, targetDeps(call.scope, id));
    const outcome = await actions.create(ref, draftOf(body, timing, target), call.scope);
    return { status: 200, body: await shown(outcome.record, call.scope) };
  });

  routes.add("GET", "/v1/agents/automations/:automation_id", async (call) => {
    const ref = automationRef(call);
    const record = await asAutomation(ref.scheduleId, () => actions.get(ref));
    return { status: 200, body: await shown(record, call.scope) };
  });

  routes.add("POST", "/v1/agents/automations/:automation_id", async (call) => {
    const body = checkUpdate(call.body);
    const ref = automationRef(call);
    const current = await asAutomation(ref.scheduleId, () => actions.get(ref));
    const spec = parseScheduleSpec(current.spec);
    const { timing, keep } = updatedTiming(body, spec.timing, current, actions.nowMs());
    if (body.metadata) checkClientMetadata(body.metadata);
    const wantedType = spec.target.kind === "session" ? "existing_session" : "new_session";
    if (body.target && body.target.type !== wantedType) {
      throw invalidArgument("target.type", `must stay ${wantedType}: create another automation`);
    }
    const target = body.target
      ? await targetOf(body.target, targetDeps(call.scope, ref.scheduleId))
      : { target: spec.target, input: spec.input };
    const fields = {
      name: body.name ?? spec.name ?? ref.scheduleId,
      metadata: body.metadata === undefined ? spec.metadata : body.metadata,
    };
    const draft = draftOf(fields, timing, target);
    const record = await asAutomation(ref.scheduleId, () =>
      actions.update(ref, draft, call.scope, keep),
    );
    return { status: 200, body: await shown(record, call.scope) };
  });

  routes.add("GET", "/v1/agents/automations", async (call) => {
    const query = pageQueryOf(call.query);
    const sessionId = call.query.session_id;
    const wanted =
      sessionId === undefined ? undefined : call.scope.toStore(sessionId, "session_id");
    const keeps = (record: ScheduleRecord) => {
      if (wanted === undefined) return true;
      const { target } = parseScheduleSpec(record.spec);
      return target.kind === "session" && target.sessionId === wanted;
    };
    const page = await automationPage(actions, call.scope.tenant, query, keeps);
    const data = await Promise.all(page.records.map((r) => shown(r, call.scope)));
    return {
      status: 200,
      body: listPage(data, (automation) => automation.id, page.hasMore),
    };
  });

  routes.add("DELETE", "/v1/agents/automations/:automation_id", async (call) => {
    const ref = automationRef(call);
    await asAutomation(ref.scheduleId, () => actions.delete(ref));
    // Its hidden inline agent goes with it (its versions stay readable, as for every agent).
    await store.deleteAgent(`${call.scope.prefix}${inlineAgentId(ref.scheduleId)}`);
    return {
      status: 200,
      body: { id: ref.scheduleId, object: "agent.automation.deleted", deleted: true },
    };
  });

  routes.add("POST", "/v1/agents/automations/:automation_id/pause", async (call) => {
    const ref = automationRef(call);
    const record = await asAutomation(ref.scheduleId, () => actions.pause(ref, "paused"));
    return { status: 200, body: await shown(record, call.scope) };
  });

  routes.add("POST", "/v1/agents/automations/:automation_id/resume", async (call) => {
    const ref = automationRef(call);
    const current = await asAutomation(ref.scheduleId, () => actions.get(ref));
    const { timing } = parseScheduleSpec(current.spec);
    const at = current.nextFireAt;
    // The Agents API resumes a once automation whose instant passed only with a new run_at (the
    // gRPC unpause settles it as missed instead); a pending manual invocation still goes.
    const passed = at !== undefined && at <= actions.nowMs() && current.runNowAt === undefined;
    if (timing.kind === "at" && current.paused && passed) {
      throw invalidArgument("run_at", "has passed: update run_at to a future time, then resume");
    }
    const record = await asAutomation(ref.scheduleId, () => actions.unpause(ref));
    return { status: 200, body: await shown(record, call.scope) };
  });
}

/**
 * An update's timing: a periodic's new cron (first occurrence from now, as gRPC's update), or a
 * once's new `run_at` while its occurrence has not happened; a once keeps its next occurrence
 * (none, once fired) when its instant is left alone.
 */
function updatedTiming(
  body: AutomationUpdateBody,
  timing: ScheduleTiming,
  current: ScheduleRecord,
  nowMs: number,
): { timing: ScheduleTiming; keep?: { nextFireAt: number | undefined } } {
  if (timing.kind === "cron") {
    if (body.run_at !== undefined) {
      throw invalidArgument("run_at", "is only for a once automation");
    }
    if (body.expression === undefined && body.timezone === undefined) return { timing };
    const fields = {
      expression: body.expression ?? timing.cron,
      timezone: body.timezone ?? timing.timezone,
    };
    return { timing: timingOf("periodic", fields, nowMs) };
  }
  if (body.expression !== undefined) {
    throw invalidArgument("expression", "is only for a periodic automation");
  }
  if (body.timezone !== undefined) {
    throw invalidArgument("timezone", "is only for a periodic automation");
  }
  if (body.run_at === undefined) return { timing, keep: { nextFireAt: current.nextFireAt } };
  if (current.nextFireAt === undefined) {
    throw invalidArgument("run_at", "its occurrence already happened: create another automation");
  }
  const at = futureInstant(body.run_at, nowMs);
  return { timing: { kind: "at", at }, keep: { nextFireAt: at } };
}

/** One page of the tenant's `auto_…` schedules (ids sort newest first), filtered by `keeps`. */
async function automationPage(
  actions: ScheduleActions,
  tenant: string,
  query: PageQuery,
  keeps: (record: ScheduleRecord) => boolean,
): Promise<{ records: ScheduleRecord[]; hasMore: boolean }> {
  const start =
    query.order === "desc" && query.after !== undefined && query.after > AUTOMATION_ID_PREFIX
      ? query.after
      : AUTOMATION_ID_PREFIX;
  const found: ScheduleRecord[] = [];
  let cursor = start;
  for (;;) {
    const step = await actions.list(tenant, { after: cursor, limit: STEP });
    const ours = step.records.filter((r) => r.scheduleId.startsWith(AUTOMATION_ID_PREFIX));
    found.push(...ours.filter(keeps));
    const last = step.records.at(-1);
    const done = !step.more || !last || ours.length < step.records.length;
    // Newest first needs no more than one record past the page; oldest first reads them all.
    if (done || (query.order === "desc" && found.length > query.limit)) break;
    cursor = last.scheduleId;
  }
  const after = query.after;
  const ordered =
    query.order === "desc"
      ? found
      : found.reverse().filter((r) => after === undefined || r.scheduleId < after);
  return { records: ordered.slice(0, query.limit), hasMore: ordered.length > query.limit };
}
