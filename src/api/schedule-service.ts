// ScheduleService (ADR 0020): a tenant's schedules over the schedule actions (schedule-actions.ts,
// which the front door's automations share). The edge validates the body once (cron, time zone,
// target, input) and maps records and runs to the wire.
import type { ServiceImpl } from "@connectrpc/connect";
import { invalidArgument } from "../domain/errors.js";
import { scheduleAlreadyExists } from "../domain/resource-errors.js";
import type { ScheduleRef } from "../domain/schedules.js";
import type { ScheduleService } from "../gen/tether/v1/schedule_service_pb.js";
import { decodePageToken, encodePageToken } from "./convert/page-token.js";
import { pageSizeOf } from "./page-size.js";
import {
  checkScheduleId,
  runToProto,
  scheduleToProto,
  specFromProto,
} from "./convert/schedules.js";
import { createScheduleActions, type ScheduleActionsOptions } from "./schedule-actions.js";
import { scopeOf, type TenantScope } from "./tenancy.js";

export type ScheduleServiceOptions = ScheduleActionsOptions;

export function createScheduleService(
  options: ScheduleServiceOptions,
): ServiceImpl<typeof ScheduleService> {
  const actions = createScheduleActions(options);

  const refOf = (scope: TenantScope, scheduleId: string): ScheduleRef => ({
    tenant: scope.tenant,
    scheduleId: checkScheduleId(scheduleId),
  });

  return {
    async createSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const ref = refOf(scope, req.scheduleId);
      const outcome = await actions.create(ref, specFromProto(req, scope), scope);
      if (outcome.kind === "conflict") throw scheduleAlreadyExists(req.scheduleId);
      return {
        schedule: scheduleToProto(outcome.record, scope),
        deduplicated: outcome.kind === "existing",
      };
    },

    async getSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const record = await actions.get(refOf(scope, req.scheduleId));
      return { schedule: scheduleToProto(record, scope) };
    },

    async listSchedules(req, ctx) {
      const scope = scopeOf(ctx.values);
      const limit = pageSizeOf("ListSchedules", req.pageSize);
      const after = decodePageToken(req.pageToken);
      const { records, more } = await actions.list(scope.tenant, {
        ...(after !== undefined && { after }),
        limit,
      });
      const last = records.at(-1);
      return {
        schedules: records.map((r) => scheduleToProto(r, scope)),
        nextPageToken: more && last ? encodePageToken(last.scheduleId) : "",
      };
    },

    async updateSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const ref = refOf(scope, req.scheduleId);
      const record = await actions.update(ref, specFromProto(req, scope), scope);
      return { schedule: scheduleToProto(record, scope) };
    },

    async deleteSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      await actions.delete(refOf(scope, req.scheduleId));
      return {};
    },

    async pauseSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const reason = req.reason === "" ? "paused" : req.reason;
      if (reason.length > 500) throw invalidArgument("reason", "must be at most 500 characters");
      const record = await actions.pause(refOf(scope, req.scheduleId), reason);
      return { schedule: scheduleToProto(record, scope) };
    },

    async unpauseSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const record = await actions.unpause(refOf(scope, req.scheduleId));
      return { schedule: scheduleToProto(record, scope) };
    },

    async runScheduleNow(req, ctx) {
      const scope = scopeOf(ctx.values);
      const record = await actions.runNow(refOf(scope, req.scheduleId));
      return { schedule: scheduleToProto(record, scope) };
    },

    async listScheduleRuns(req, ctx) {
      const scope = scopeOf(ctx.values);
      const ref = refOf(scope, req.scheduleId);
      await actions.get(ref);
      const runs = await actions.runs(ref, pageSizeOf("ListScheduleRuns", req.pageSize));
      return { runs: runs.map(runToProto) };
    },
  };
}
