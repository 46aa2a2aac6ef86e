// An automation's invocations (ADR 0037, "Automations"): its schedule's runs, the newest
// SCHEDULE_RUNS_KEPT kept, plus a manual invocation not settled yet (a pending run-now, shown
// `queued`). A manual POST is the schedule's run-now: it fires once, on whichever replica claims
// it, and its run lists under the id the POST answered.
import { TetherError } from "../domain/errors.js";
import { SCHEDULE_RUNS_KEPT, type ScheduleRecord } from "../domain/schedules.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { ScheduleActions } from "../api/schedule-actions.js";
import type { TenantScope } from "../api/tenancy.js";
import { listPage, pageQueryOf, type PageQuery } from "./cursor-page.js";
import type { RouteTable } from "./route-table.js";
import {
  automationObject,
  invocationObject,
  parseInvocationId,
  queuedInvocation,
} from "./automation-object.js";
import { asAutomation, automationRef } from "./automation-routes.js";

type Invocation = Record<string, unknown> & { id: string; created_at: number };

export interface InvocationRoutesDeps {
  actions: ScheduleActions;
  store: RuntimeStore;
}

export function addInvocationRoutes(routes: RouteTable, deps: InvocationRoutesDeps): void {
  const { actions, store } = deps;

  /** Every invocation the automation keeps, newest first. */
  async function invocationsOf(scope: TenantScope, record: ScheduleRecord) {
    const automation = await automationObject(record, scope, store);
    const runs = await actions.runs(
      { tenant: scope.tenant, scheduleId: record.scheduleId },
      SCHEDULE_RUNS_KEPT,
    );
    const listed = runs.map((run) => invocationObject(run, automation) as Invocation);
    const pending = record.runNowAt;
    const settled = runs.some((run) => run.manual === true && run.scheduledAt === pending);
    if (pending === undefined || settled) return listed;
    return [queuedInvocation(pending, record, automation, scope) as Invocation, ...listed];
  }

  routes.add("POST", "/v1/agents/automations/:automation_id/invocations", async (call) => {
    const ref = automationRef(call);
    const record = await asAutomation(ref.scheduleId, () => actions.runNow(ref));
    const automation = await automationObject(record, call.scope, store);
    // runNow always leaves a request pending (a second POST before the fire joins the first).
    const requestedAt = record.runNowAt ?? actions.nowMs();
    return { status: 200, body: queuedInvocation(requestedAt, record, automation, call.scope) };
  });

  routes.add("GET", "/v1/agents/automations/:automation_id/invocations", async (call) => {
    const query = pageQueryOf(call.query);
    const ref = automationRef(call);
    const record = await asAutomation(ref.scheduleId, () => actions.get(ref));
    const page = pageOf(await invocationsOf(call.scope, record), query);
    return {
      status: 200,
      body: listPage(page.data, (invocation) => invocation.id, page.hasMore),
    };
  });

  routes.add(
    "GET",
    "/v1/agents/automations/:automation_id/invocations/:invocation_id",
    async (call) => {
      const ref = automationRef(call);
      const id = call.params.invocation_id ?? "";
      const record = await asAutomation(ref.scheduleId, () => actions.get(ref));
      const found =
        parseInvocationId(id) &&
        (await invocationsOf(call.scope, record)).find((inv) => inv.id === id);
      if (!found) {
        throw new TetherError(
          "schedule_not_found",
          `invocation ${id} of automation ${ref.scheduleId} does not exist (or is older than the newest ${SCHEDULE_RUNS_KEPT} kept)`,
          { fields: { scheduleId: ref.scheduleId } },
        );
      }
      return { status: 200, body: found };
    },
  );
}

/**
 * A cursor page of the kept invocations: `after` is exclusive in the page's order; an `after`
 * no longer kept pages on by its time.
 */
function pageOf(newestFirst: Invocation[], query: PageQuery) {
  const ordered = query.order === "desc" ? newestFirst : [...newestFirst].reverse();
  let rest = ordered;
  if (query.after !== undefined) {
    const at = ordered.findIndex((inv) => inv.id === query.after);
    const when = parseInvocationId(query.after)?.at;
    if (at >= 0) rest = ordered.slice(at + 1);
    else if (when === undefined) rest = [];
    else {
      const seconds = Math.floor(when / 1000);
      rest = ordered.filter((inv) =>
        query.order === "desc" ? inv.created_at < seconds : inv.created_at > seconds,
      );
    }
  }
  return { data: rest.slice(0, query.limit), hasMore: rest.length > query.limit };
}
