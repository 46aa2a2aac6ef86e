// A tenant's schedule actions (ADR 0020), free of any wire: what ScheduleService (gRPC) and the
// front door's automations (src/agents-api, ADR 0037) both do to a schedule. Each checks the
// target when it is set, computes occurrences from this replica's clock, settles a one-off that
// was missed while paused, and wakes this replica's poller after a change; firing is the poller's.
import { sessionNotFound } from "../domain/errors.js";
import { agentNotFound, scheduleNotFound } from "../domain/resource-errors.js";
import { clientSessionId } from "../domain/ids.js";
import { firstOccurrence } from "../domain/schedule-timing.js";
import {
  MISSED_WHILE_PAUSED,
  parseScheduleSpec,
  type ScheduleRecord,
  type ScheduleRef,
  type ScheduleRun,
  type ScheduleSpec,
} from "../domain/schedules.js";
import type { Clock } from "../ports/clock.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import type { CreateScheduleOutcome, ScheduleStore } from "../ports/schedule-store.js";
import type { TenantScope } from "./tenancy.js";

export interface ScheduleActionsOptions {
  schedules: ScheduleStore;
  /** Where targets are checked: the session or agent must exist when the schedule is set. */
  store: Pick<RuntimeStore, "loadSession" | "getAgent">;
  clock: Clock;
  /** Cuts this replica's poller sleep short after a change. */
  wake?: () => void;
}

/** A validated spec and its canonical JSON (the bytes that decide whether a create replays). */
export interface SpecDraft {
  spec: ScheduleSpec;
  json: string;
}

export interface ScheduleActions {
  /** This replica's clock: where a caller reckons "now" from, as the actions do. */
  nowMs(): number;
  create(ref: ScheduleRef, draft: SpecDraft, scope: TenantScope): Promise<CreateScheduleOutcome>;
  /**
   * Replaces the spec. The next occurrence is the timing's first from now unless `nextFireAt` is
   * given (a caller keeping a one-off that already fired without one).
   */
  update(
    ref: ScheduleRef,
    draft: SpecDraft,
    scope: TenantScope,
    timing?: { nextFireAt: number | undefined },
  ): Promise<ScheduleRecord>;
  get(ref: ScheduleRef): Promise<ScheduleRecord>;
  /** One page of the tenant's schedules by id after `after`; `more` when another follows. */
  list(
    tenant: string,
    page: { after?: string; limit: number },
  ): Promise<{ records: ScheduleRecord[]; more: boolean }>;
  delete(ref: ScheduleRef): Promise<void>;
  pause(ref: ScheduleRef, reason: string): Promise<ScheduleRecord>;
  unpause(ref: ScheduleRef): Promise<ScheduleRecord>;
  /** Asks for one fire at `at` (the store's now without it): see ScheduleStore.runScheduleNow. */
  runNow(ref: ScheduleRef, at?: number): Promise<ScheduleRecord>;
  /**
   * The schedule's runs, newest first (the store keeps the newest SCHEDULE_RUNS_KEPT); none for
   * an absent schedule, which callers check with `get` first (they need its record anyway).
   */
  runs(ref: ScheduleRef, limit: number): Promise<ScheduleRun[]>;
}

export function createScheduleActions(options: ScheduleActionsOptions): ScheduleActions {
  const { schedules, store, clock } = options;
  const wake = () => options.wake?.();

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

  /**
   * A draft without the front door's `name` and `metadata` (gRPC's UpdateSchedule has no such
   * fields) keeps the stored ones: an automation updated over gRPC stays the automation it was.
   */
  async function keepDoorFields(ref: ScheduleRef, draft: SpecDraft): Promise<SpecDraft> {
    if (draft.spec.name !== undefined || draft.spec.metadata !== undefined) return draft;
    const current = await schedules.getSchedule(ref);
    if (!current) return draft;
    const { name, metadata } = parseScheduleSpec(current.spec);
    if (name === undefined && metadata === undefined) return draft;
    const doorFields = { name, metadata };
    return {
      spec: { ...draft.spec, ...doorFields },
      json: JSON.stringify({ ...(JSON.parse(draft.json) as object), ...doorFields }),
    };
  }

  function found(record: ScheduleRecord | undefined, ref: ScheduleRef): ScheduleRecord {
    if (!record) throw scheduleNotFound(ref.scheduleId);
    return record;
  }

  return {
    nowMs: () => clock.nowMs(),

    async create(ref, { spec, json }, scope) {
      await checkTarget(spec, scope);
      const outcome = await schedules.createSchedule({
        ...ref,
        spec: json,
        nextFireAt: firstOccurrence(spec.timing, clock.nowMs()),
      });
      if (outcome.kind === "created") wake();
      return outcome;
    },

    async update(ref, given, scope, timing) {
      const { spec, json } = await keepDoorFields(ref, given);
      await checkTarget(spec, scope);
      const nextFireAt = timing ? timing.nextFireAt : firstOccurrence(spec.timing, clock.nowMs());
      const record = await schedules.updateSchedule({ ...ref, spec: json, nextFireAt });
      wake();
      return found(record, ref);
    },

    async get(ref) {
      return found(await schedules.getSchedule(ref), ref);
    },

    async list(tenant, { after, limit }) {
      // One more than asked says whether another page follows.
      const records = await schedules.listSchedules(tenant, {
        ...(after !== undefined && { after }),
        limit: limit + 1,
      });
      return { records: records.slice(0, limit), more: records.length > limit };
    },

    async delete(ref) {
      if (!(await schedules.deleteSchedule(ref))) throw scheduleNotFound(ref.scheduleId);
    },

    async pause(ref, reason) {
      return found(await schedules.pauseSchedule(ref, reason), ref);
    },

    async unpause(ref) {
      const current = found(await schedules.getSchedule(ref), ref);
      const spec = parseScheduleSpec(current.spec);
      const record =
        spec.timing.kind === "at"
          ? await unpauseOneOff(ref, current, spec)
          : await schedules.unpauseSchedule(ref, firstOccurrence(spec.timing, clock.nowMs()));
      wake();
      return found(record, ref);
    },

    async runNow(ref, at) {
      const record = await schedules.runScheduleNow(ref, at);
      wake();
      return found(record, ref);
    },

    async runs(ref, limit) {
      return schedules.listScheduleRuns(ref, limit);
    },
  };
}
