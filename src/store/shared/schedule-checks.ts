// What crosses the schedule port is validated once, here, for every backend (its check table,
// ADR 0034): a bad tenant, id, instant or token is invalid_argument naming the field, before
// anything is read.
import { invalidArgument } from "../../domain/errors.js";
import { checkId } from "../../domain/ids.js";
import type { ScheduleRef } from "../../domain/schedules.js";
import type { ScheduleDraft, ScheduleStore } from "../../ports/schedule-store.js";
import { nothingToCheck, type CheckTable } from "./checked.js";
import { checkTenant } from "./quota-checks.js";

function checkRef<T extends ScheduleRef>(ref: T): T {
  checkTenant(ref.tenant);
  const id = checkId("schedule_id", ref.scheduleId);
  if (id.length > 128) throw invalidArgument("schedule_id", "must be at most 128 characters");
  return ref;
}

/** Epoch milliseconds, as every instant of the port is. */
function checkInstant(raw: unknown, field: string): number {
  if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < 0) {
    throw invalidArgument(field, "must be epoch milliseconds");
  }
  return raw;
}

function checkDraft(draft: ScheduleDraft): ScheduleDraft {
  checkRef(draft);
  if (typeof draft.spec !== "string" || draft.spec === "") {
    throw invalidArgument("spec", "must not be empty");
  }
  if (draft.nextFireAt !== undefined) checkInstant(draft.nextFireAt, "nextFireAt");
  return draft;
}

const checkClaimToken = (raw: unknown): string => checkId("claim_token", raw);

function checkTtl(raw: unknown): number {
  if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < 1) {
    throw invalidArgument("ttl_ms", "must be an integer of at least 1");
  }
  return raw;
}

export const scheduleChecks = {
  createSchedule: checkDraft,
  updateSchedule: checkDraft,
  deleteSchedule: checkRef,
  getSchedule: checkRef,
  listSchedules: (tenant, options) => checkRef({ tenant, scheduleId: options.after ?? "x" }),
  pauseSchedule: checkRef,
  unpauseSchedule: (ref, nextFireAt, missed) => {
    checkRef(ref);
    if (nextFireAt !== undefined) checkInstant(nextFireAt, "nextFireAt");
    if (missed) checkInstant(missed.scheduledAt, "missed.scheduledAt");
  },
  runScheduleNow: (ref, at) => {
    checkRef(ref);
    if (at !== undefined) checkInstant(at, "at");
  },
  dueSchedules: nothingToCheck,
  claimScheduleFire: (ref, claimToken, ttlMs) => {
    checkClaimToken(claimToken);
    checkTtl(ttlMs);
    checkRef(ref);
  },
  completeScheduleFire: (completion) => {
    checkRef(completion.ref);
    if (completion.nextFireAt !== undefined) checkInstant(completion.nextFireAt, "nextFireAt");
    checkClaimToken(completion.claimToken);
  },
  listScheduleRuns: checkRef,
} satisfies CheckTable<ScheduleStore>;
