// The schedule port (ADR 0020): schedules, their due index and their runs, all read by the
// store's clock (Redis TIME, or the memory store's injected clock). Each operation is one atomic
// step (one Lua script on Redis, every key in the one `{sched}` slot). The store never parses a
// cron: callers compute occurrences and hand the store instants.
import type {
  ScheduleClaim,
  ScheduleFireCompletion,
  ScheduleRecord,
  ScheduleRef,
  ScheduleRun,
} from "../domain/schedules.js";

export interface ScheduleDraft extends ScheduleRef {
  spec: string;
  /** The first regular occurrence; undefined for a schedule with none left. */
  nextFireAt: number | undefined;
}

export type CreateScheduleOutcome =
  | { kind: "created"; record: ScheduleRecord }
  /** The same id with the same spec: the stored schedule, unchanged (an idempotent replay). */
  | { kind: "existing"; record: ScheduleRecord }
  /** The same id with another spec: nothing changed. */
  | { kind: "conflict"; record: ScheduleRecord };

export interface DueSchedules {
  /** The store's clock at the look. */
  now: number;
  /** Schedules whose due time has come (a hint: the claim decides). */
  due: ScheduleRef[];
  /** The earliest due time after now, if any: how long a poller may sleep. */
  nextDueAt: number | undefined;
}

export interface ScheduleStore {
  createSchedule(draft: ScheduleDraft): Promise<CreateScheduleOutcome>;
  /** Replaces the spec and the next occurrence; bumps the revision. Undefined when absent. */
  updateSchedule(draft: ScheduleDraft): Promise<ScheduleRecord | undefined>;
  deleteSchedule(ref: ScheduleRef): Promise<boolean>;
  getSchedule(ref: ScheduleRef): Promise<ScheduleRecord | undefined>;
  /** One tenant's schedules by id, after `after`, at most `limit`. */
  listSchedules(
    tenant: string,
    options: { after?: string; limit: number },
  ): Promise<ScheduleRecord[]>;
  /** Paused schedules never fire (a pending run-now waits too). Idempotent. */
  pauseSchedule(ref: ScheduleRef, reason: string): Promise<ScheduleRecord | undefined>;
  /**
   * Resumes with `nextFireAt` as the next regular occurrence (computed from now by the caller).
   * With `missed` (a one-off whose instant passed while paused), in the same step: when the
   * schedule is paused, holds no claim (live or lapsed: a claimed occurrence is settled by its
   * claim) and its stored next occurrence is `missed.scheduledAt`, at or before the store's now,
   * the run `missed` is appended and the schedule resumes at `nextFireAt`; otherwise `missed` is
   * dropped and the stored next occurrence is kept. A running schedule is left as it is.
   */
  unpauseSchedule(
    ref: ScheduleRef,
    nextFireAt: number | undefined,
    missed?: ScheduleRun,
  ): Promise<ScheduleRecord | undefined>;
  /**
   * Asks for one fire at `at` (the store's now without it), besides the regular timing. A request
   * already waiting is kept (one fire answers both); an `at` at or before the last fire's
   * occurrence asks for nothing (a request at that instant has fired: a retry must not fire it
   * again).
   */
  runScheduleNow(ref: ScheduleRef, at?: number): Promise<ScheduleRecord | undefined>;
  dueSchedules(limit: number): Promise<DueSchedules>;
  /**
   * Claims the schedule's due occurrence for `ttlMs`: in one step, checks it is due, not paused
   * and not claimed by a live claim, then records the claim and moves the due time to the claim's
   * expiry. A lapsed claim is re-claimable and names the same occurrence. Undefined when not due.
   */
  claimScheduleFire(
    ref: ScheduleRef,
    claimToken: string,
    ttlMs: number,
  ): Promise<ScheduleClaim | undefined>;
  /**
   * Settles a claim: only the live claim's token and occurrence apply it (else false, nothing
   * changed). Appends the run (keeping the newest SCHEDULE_RUNS_KEPT), advances the regular
   * timing (unless the spec changed since the claim) or clears the run-now request, pauses on a
   * refusal, and puts the schedule back in the due index at its next occurrence.
   */
  completeScheduleFire(completion: ScheduleFireCompletion): Promise<boolean>;
  /** Newest first. */
  listScheduleRuns(ref: ScheduleRef, limit: number): Promise<ScheduleRun[]>;
}
