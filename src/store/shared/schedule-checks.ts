// What crosses the schedule port is validated once, here, for every backend: a bad tenant, id,
// instant or token is invalid_argument naming the field, before anything is read.
import { invalidArgument } from "../../domain/errors.js";
import { checkId } from "../../domain/ids.js";
import type { ScheduleRef } from "../../domain/schedules.js";
import type { ScheduleDraft } from "../../ports/schedule-store.js";
import { checkTenant } from "./quota-checks.js";

export function checkRef<T extends ScheduleRef>(ref: T): T {
  checkTenant(ref.tenant);
  const id = checkId("schedule_id", ref.scheduleId);
  if (id.length > 128) throw invalidArgument("schedule_id", "must be at most 128 characters");
  return ref;
}

/** Epoch milliseconds, as every instant of the port is. */
export function checkInstant(raw: unknown, field: string): number {
  if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < 0) {
    throw invalidArgument(field, "must be epoch milliseconds");
  }
  return raw;
}

export function checkDraft(draft: ScheduleDraft): ScheduleDraft {
  checkRef(draft);
  if (typeof draft.spec !== "string" || draft.spec === "") {
    throw invalidArgument("spec", "must not be empty");
  }
  if (draft.nextFireAt !== undefined) checkInstant(draft.nextFireAt, "nextFireAt");
  return draft;
}

export const checkClaimToken = (raw: unknown): string => checkId("claim_token", raw);

export function checkTtl(raw: unknown): number {
  if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < 1) {
    throw invalidArgument("ttl_ms", "must be an integer of at least 1");
  }
  return raw;
}
