// ScheduleService (ADR 0020): a tenant's schedules over the schedule store. The edge validates
// the body once (cron, time zone, target, input), computes the next occurrence from this
// replica's clock, and wakes this replica's poller after a change; firing is the poller's.
import type { ServiceImpl } from "@connectrpc/connect";
import {
  agentNotFound,
  invalidArgument,
  scheduleAlreadyExists,
  scheduleNotFound,
  sessionNotFound,
} from "../domain/errors.js";
import { clientSessionId } from "../domain/ids.js";
import { firstOccurrence } from "../domain/schedule-timing.js";
import {
  MISSED_WHILE_PAUSED,
  type ScheduleRecord,
  type ScheduleRef,
  type ScheduleSpec,
} from "../domain/schedules.js";
import type { ScheduleService } from "../gen/tether/v1/schedule_service_pb.js";
import type { Clock } from "../ports/clock.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { ScheduleStore } from "../ports/schedule-store.js";
import { decodePageToken, encodePageToken } from "./convert/page-token.js";
import { pageSizeOf } from "./page-size.js";
import {
  checkScheduleId,
  runToProto,
  scheduleToProto,
  specFromProto,
} from "./convert/schedules.js";
import { scopeOf, type TenantScope } from "./tenancy.js";

export interface ScheduleServiceOptions {
  schedules: ScheduleStore;
  /** Where targets are checked: the session or agent must exist when the schedule is set. */
  store: Pick<RuntimeStore, "loadSession" | "getAgent">;
  clock: Clock;
  /** Cuts this replica's poller sleep short after a change. */
  wake?: () => void;
}

export function createScheduleService(
  options: ScheduleServiceOptions,
): ServiceImpl<typeof ScheduleService> {
  const { schedules, store, clock } = options;
  const wake = () => options.wake?.();

  const refOf = (scope: TenantScope, scheduleId: string): ScheduleRef => ({
    tenant: scope.tenant,
    scheduleId: checkScheduleId(scheduleId),
  });

  /** A target must exist when it is set; a later disappearance pauses the schedule instead. */
  async function checkTarget(spec: ScheduleSpec, scope: TenantScope): Promise<void> {
    const { target } = spec;
    if (target.kind === "session") {
      if (!(await store.loadSession(target.sessionId))) {
        throw sessionNotFound(scope.toClient(target.sessionId));
      }
      return;
    }
    if (!(await store.getAgent(target.agentId, target.version))) {
      throw agentNotFound(target.clientAgentId, target.version);
    }
  }

  /**
   * A one-off keeps its instant when it is still ahead (or has none left: it fired or was
   * missed). One whose instant passed while paused is missed, never fired late: it ends with a
   * run saying so (the store checks, in the unpause's step, that no claim is firing it).
   */
  async function unpauseOneOff(
    ref: ScheduleRef,
    current: ScheduleRecord,
    spec: ScheduleSpec,
  ): Promise<ScheduleRecord | undefined> {
    const at = current.nextFireAt;
    const now = clock.nowMs();
    if (at === undefined || at > now) return schedules.unpauseSchedule(ref, at);
    const { target } = spec;
    return schedules.unpauseSchedule(ref, undefined, {
      runId: `run-${at}`,
      scheduledAt: at,
      firedAt: now,
      sessionId: target.kind === "session" ? clientSessionId(target.sessionId) : "",
      skipReason: MISSED_WHILE_PAUSED,
    });
  }

  function found(record: ScheduleRecord | undefined, scheduleId: string): ScheduleRecord {
    if (!record) throw scheduleNotFound(scheduleId);
    return record;
  }

  return {
    async createSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const ref = refOf(scope, req.scheduleId);
      const { spec, json } = specFromProto(req, scope);
      await checkTarget(spec, scope);
      const outcome = await schedules.createSchedule({
        ...ref,
        spec: json,
        nextFireAt: firstOccurrence(spec.timing, clock.nowMs()),
      });
      if (outcome.kind === "conflict") throw scheduleAlreadyExists(req.scheduleId);
      if (outcome.kind === "created") wake();
      return {
        schedule: scheduleToProto(outcome.record, scope),
        deduplicated: outcome.kind === "existing",
      };
    },

    async getSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const record = await schedules.getSchedule(refOf(scope, req.scheduleId));
      return { schedule: scheduleToProto(found(record, req.scheduleId), scope) };
    },

    async listSchedules(req, ctx) {
      const scope = scopeOf(ctx.values);
      const limit = pageSizeOf("ListSchedules", req.pageSize);
      const after = decodePageToken(req.pageToken);
      // One more than asked says whether another page follows.
      const records = await schedules.listSchedules(scope.tenant, {
        ...(after !== undefined && { after }),
        limit: limit + 1,
      });
      const page = records.slice(0, limit);
      const last = page.at(-1);
      return {
        schedules: page.map((r) => scheduleToProto(r, scope)),
        nextPageToken: records.length > limit && last ? encodePageToken(last.scheduleId) : "",
      };
    },

    async updateSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const ref = refOf(scope, req.scheduleId);
      const { spec, json } = specFromProto(req, scope);
      await checkTarget(spec, scope);
      const record = await schedules.updateSchedule({
        ...ref,
        spec: json,
        nextFireAt: firstOccurrence(spec.timing, clock.nowMs()),
      });
      wake();
      return { schedule: scheduleToProto(found(record, req.scheduleId), scope) };
    },

    async deleteSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      if (!(await schedules.deleteSchedule(refOf(scope, req.scheduleId)))) {
        throw scheduleNotFound(req.scheduleId);
      }
      return {};
    },

    async pauseSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const reason = req.reason === "" ? "paused" : req.reason;
      if (reason.length > 500) throw invalidArgument("reason", "must be at most 500 characters");
      const record = await schedules.pauseSchedule(refOf(scope, req.scheduleId), reason);
      return { schedule: scheduleToProto(found(record, req.scheduleId), scope) };
    },

    async unpauseSchedule(req, ctx) {
      const scope = scopeOf(ctx.values);
      const ref = refOf(scope, req.scheduleId);
      const current = found(await schedules.getSchedule(ref), req.scheduleId);
      const spec = JSON.parse(current.spec) as ScheduleSpec;
      const record =
        spec.timing.kind === "at"
          ? await unpauseOneOff(ref, current, spec)
          : await schedules.unpauseSchedule(ref, firstOccurrence(spec.timing, clock.nowMs()));
      wake();
      return { schedule: scheduleToProto(found(record, req.scheduleId), scope) };
    },

    async runScheduleNow(req, ctx) {
      const scope = scopeOf(ctx.values);
      const record = await schedules.runScheduleNow(refOf(scope, req.scheduleId));
      wake();
      return { schedule: scheduleToProto(found(record, req.scheduleId), scope) };
    },

    async listScheduleRuns(req, ctx) {
      const scope = scopeOf(ctx.values);
      const ref = refOf(scope, req.scheduleId);
      found(await schedules.getSchedule(ref), req.scheduleId);
      const runs = await schedules.listScheduleRuns(
        ref,
        pageSizeOf("ListScheduleRuns", req.pageSize),
      );
      return { runs: runs.map(runToProto) };
    },
  };
}
