// The schedule port in memory, on the injected clock. Every operation runs to completion without
// awaiting, so each is one atomic step as the Redis scripts are (ADR 0020).
import {
  SCHEDULE_RUNS_KEPT,
  type ScheduleRecord,
  type ScheduleRef,
  type ScheduleRun,
} from "../../domain/schedules.js";
import type { Clock } from "../../ports/clock.js";
import type { ScheduleStore } from "../../ports/schedule-store.js";
import { withChecks } from "../shared/checked.js";
import { scheduleChecks } from "../shared/schedule-checks.js";

interface Cell {
  record: ScheduleRecord;
  claim: { token: string; scheduledAt: number; expiresAt: number; runNow: boolean } | undefined;
  runs: ScheduleRun[];
}

const keyOf = (ref: ScheduleRef): string => JSON.stringify([ref.tenant, ref.scheduleId]);
const copy = (record: ScheduleRecord): ScheduleRecord => ({ ...record });

/** When the schedule is next looked at: a live claim's expiry, else its earliest occurrence. */
function dueAt(cell: Cell, now: number): number | undefined {
  if (cell.claim && cell.claim.expiresAt > now) return cell.claim.expiresAt;
  if (cell.record.paused) return undefined;
  // A lapsed claim is due at once: its occurrence may have fired and must be settled.
  if (cell.claim) return cell.claim.expiresAt;
  const times = [cell.record.nextFireAt, cell.record.runNowAt].filter(
    (t): t is number => t !== undefined,
  );
  return times.length === 0 ? undefined : Math.min(...times);
}

/** What a schedule's firing reads and settles (the scheduler's side of the port). */
type FireOps = Pick<
  ScheduleStore,
  "dueSchedules" | "claimScheduleFire" | "completeScheduleFire" | "listScheduleRuns"
>;

/** The state both halves share: the cells by tenant and id, and the store's clock. */
interface Cells {
  cells: Map<string, Cell>;
  now: () => number;
  cellOf: (ref: ScheduleRef) => Cell | undefined;
}

export function createMemoryScheduleStore(options: { clock: Clock }): ScheduleStore {
  const cells = new Map<string, Cell>();
  const state: Cells = {
    cells,
    now: () => options.clock.nowMs(),
    cellOf: (ref) => cells.get(keyOf(ref)),
  };
  return withChecks(scheduleChecks, { ...recordOps(state), ...fireOps(state) });
}

/** What a client does to its schedules: create, change, pause, resume, ask for a run. */
function recordOps({ cells, now, cellOf }: Cells): Omit<ScheduleStore, keyof FireOps> {
  return {
    async createSchedule(draft) {
      const existing = cells.get(keyOf(draft));
      if (existing) {
        const kind = existing.record.spec === draft.spec ? "existing" : "conflict";
        return { kind, record: copy(existing.record) };
      }
      const record: ScheduleRecord = {
        tenant: draft.tenant,
        scheduleId: draft.scheduleId,
        spec: draft.spec,
        revision: 1,
        paused: false,
        pausedReason: "",
        nextFireAt: draft.nextFireAt,
        lastFireAt: undefined,
        runNowAt: undefined,
      };
      cells.set(keyOf(draft), { record, claim: undefined, runs: [] });
      return { kind: "created", record: copy(record) };
    },

    async updateSchedule(draft) {
      const cell = cells.get(keyOf(draft));
      if (!cell) return undefined;
      cell.record.spec = draft.spec;
      cell.record.nextFireAt = draft.nextFireAt;
      cell.record.revision += 1;
      return copy(cell.record);
    },

    async deleteSchedule(ref) {
      return cells.delete(keyOf(ref));
    },

    async getSchedule(ref) {
      const cell = cellOf(ref);
      return cell && copy(cell.record);
    },

    async listSchedules(tenant, { after, limit }) {
      return [...cells.values()]
        .map((c) => c.record)
        .filter((r) => r.tenant === tenant && (after === undefined || r.scheduleId > after))
        .sort((a, b) => (a.scheduleId < b.scheduleId ? -1 : 1))
        .slice(0, limit)
        .map(copy);
    },

    async pauseSchedule(ref, reason) {
      const cell = cellOf(ref);
      if (!cell) return undefined;
      cell.record.paused = true;
      cell.record.pausedReason = reason;
      return copy(cell.record);
    },

    async unpauseSchedule(ref, nextFireAt, missed) {
      const cell = cellOf(ref);
      if (!cell) return undefined;
      const { record } = cell;
      if (record.paused) {
        record.paused = false;
        record.pausedReason = "";
        if (!missed) record.nextFireAt = nextFireAt;
        else if (
          cell.claim === undefined &&
          record.nextFireAt === missed.scheduledAt &&
          missed.scheduledAt <= now()
        ) {
          record.nextFireAt = nextFireAt;
          cell.runs.unshift({ ...missed });
          cell.runs.length = Math.min(cell.runs.length, SCHEDULE_RUNS_KEPT);
        }
      }
      return copy(record);
    },

    async runScheduleNow(ref, at) {
      const cell = cellOf(ref);
      if (!cell) return undefined;
      const { lastFireAt } = cell.record;
      const fired = at !== undefined && lastFireAt !== undefined && at <= lastFireAt;
      if (!fired) cell.record.runNowAt ??= at ?? now();
      return copy(cell.record);
    },
  };
}

/** What the scheduler does: find what is due, claim an occurrence, settle it, read the runs. */
function fireOps({ cells, now, cellOf }: Cells): FireOps {
  return {
    async dueSchedules(limit) {
      const at = now();
      const times = [...cells.values()]
        .map((cell) => ({ cell, due: dueAt(cell, at) }))
        .filter((x): x is { cell: Cell; due: number } => x.due !== undefined)
        .sort((a, b) => a.due - b.due);
      const due = times.filter((x) => x.due <= at).slice(0, limit);
      const later = times.find((x) => x.due > at);
      return {
        now: at,
        due: due.map(({ cell }) => ({
          tenant: cell.record.tenant,
          scheduleId: cell.record.scheduleId,
        })),
        nextDueAt: later?.due,
      };
    },

    async claimScheduleFire(ref, token, ttl) {
      const cell = cellOf(ref);
      const at = now();
      if (!cell || cell.record.paused) return undefined;
      const due = dueAt(cell, at);
      if (due === undefined || due > at) return undefined;
      // A lapsed claim is taken over with the same occurrence: its fire may have happened.
      const lapsed = cell.claim;
      const runNow = lapsed
        ? lapsed.runNow
        : cell.record.runNowAt !== undefined && cell.record.runNowAt <= at;
      const scheduledAt = lapsed
        ? lapsed.scheduledAt
        : runNow
          ? (cell.record.runNowAt as number)
          : (cell.record.nextFireAt as number);
      cell.claim = { token, scheduledAt, expiresAt: at + ttl, runNow };
      return { record: copy(cell.record), scheduledAt, runNow, claimToken: token, now: at };
    },

    async completeScheduleFire(completion) {
      const cell = cellOf(completion.ref);
      const at = now();
      const claim = cell?.claim;
      if (
        !cell ||
        !claim ||
        claim.expiresAt <= at ||
        claim.token !== completion.claimToken ||
        claim.scheduledAt !== completion.scheduledAt
      ) {
        return false;
      }
      const { record } = cell;
      cell.claim = undefined;
      if (claim.runNow) record.runNowAt = undefined;
      else if (record.revision === completion.revision) record.nextFireAt = completion.nextFireAt;
      if (completion.run) {
        record.lastFireAt = completion.scheduledAt;
        cell.runs.unshift({ ...completion.run });
        cell.runs.length = Math.min(cell.runs.length, SCHEDULE_RUNS_KEPT);
      }
      if (completion.pauseReason !== undefined) {
        record.paused = true;
        record.pausedReason = completion.pauseReason;
      }
      return true;
    },

    async listScheduleRuns(ref, limit) {
      const cell = cellOf(ref);
      return (cell?.runs ?? []).slice(0, limit).map((r) => ({ ...r }));
    },
  };
}
