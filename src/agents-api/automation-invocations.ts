// An automation's invocations (ADR 0037, "Automations"): its schedule's runs, the newest
// SCHEDULE_RUNS_KEPT kept, plus a manual invocation not settled yet (a pending run-now, shown
// `queued`). A manual POST is the schedule's run-now: it fires once, on whichever replica claims
// it, and its run lists under the id the POST answered.
import { TetherError } from "../domain/errors.js";
import { SCHEDULE_RUNS_KEPT, type ScheduleRecord, type ScheduleRef } from "../domain/schedules.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { ScheduleActions } from "../api/schedule-actions.js";
import type { TenantScope } from "../api/tenancy.js";
import { listPage, pageQueryOf, type PageQuery } from "./cursor-page.js";
import type { Call, RouteTable } from "./route-table.js";
import { createIdOf, idempotencyKeyOf, type KeyedCreates } from "./idempotent-create.js";
import {
  automationObject,
  invocationId,
  invocationObject,
  parseInvocationId,
  queuedInvocation,
} from "./automation-object.js";
import { asAutomation, automationRef } from "./automation-routes.js";

type Invocation = Record<string, unknown> & { id: string; created_at: number };

export interface InvocationRoutesDeps {
  actions: ScheduleActions;
  store: RuntimeStore;
  keys: KeyedCreates;
}

export function addInvocationRoutes(routes: RouteTable, deps: InvocationRoutesDeps): void {
  const { actions, store, keys } = deps;

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
    if (idempotencyKeyOf(call) !== undefined) {
      return { status: 200, body: await keyedInvocation(call, ref) };
    }
    const record = await asAutomation(ref.scheduleId, () => actions.runNow(ref));
    const automation = await automationObject(record, call.scope, store);
    // runNow always leaves a request pending (a second POST before the fire joins the first).
    const requestedAt = record.runNowAt ?? actions.nowMs();
    return { status: 200, body: queuedInvocation(requestedAt, record, automation, call.scope) };
  });

  /**
   * A manual invocation under an Idempotency-Key. The key is claimed first and names the
   * invocation's id, `inv_m<instant>`: the run-now request waiting (it joins it), else a fresh
   * instant after the last fire. The run-now is then asked at that very instant, which the store
   * keeps only while nothing waits and nothing at or after it has fired; so a retry, on any
   * replica, answers the invocation as it is now (queued, then completed) and never fires it twice.
   */
  async function keyedInvocation(call: Call, ref: ScheduleRef): Promise<Invocation> {
    const before = await asAutomation(ref.scheduleId, () => actions.get(ref));
    const fresh = () =>
      invocationId(
        true,
        before.runNowAt ?? Math.max(actions.nowMs(), (before.lastFireAt ?? 0) + 1),
      );
    const hashed = { automation_id: ref.scheduleId, body: call.body ?? null };
    const { id } = await createIdOf(keys, call, "automations.invoke", fresh, hashed);
    const at = parseInvocationId(id)?.at ?? 0;
    const known = async (record: ScheduleRecord) =>
      (await invocationsOf(call.scope, record)).find((inv) => inv.id === id);
    const asked = await asAutomation(ref.scheduleId, () => actions.runNow(ref, at));
    const found = await known(asked);
    if (found) return found;
    // Another request waits (it came between this one's look and its ask), or a later fire
    // happened before this key's request was ever asked (its first attempt stopped short).
    throw new TetherError(
      "session_busy",
      `automation ${ref.scheduleId} cannot take invocation ${id} now: ${
        asked.runNowAt === undefined
          ? "it is no longer kept, or a later fire came before it was asked for; send it under a new key"
          : "another manual invocation is queued; send it again once that one has run"
      }`,
      { fields: { scheduleId: ref.scheduleId } },
    );
  }

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
