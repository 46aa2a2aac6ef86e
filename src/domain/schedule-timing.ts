// When a schedule fires (ADR 0020): cron occurrences in an IANA time zone (croner, 5-field POSIX
// semantics: day-of-month OR day-of-week), one-off instants, and what a late fire does. Pure: every
// function takes the instant it reasons from, so the store's clock stays the only clock.
import { Cron } from "croner";
import { invalidArgument } from "./errors.js";
import type { ScheduleSpec, ScheduleTiming } from "./schedules.js";

/** How many upcoming occurrences a schedule shows. */
export const UPCOMING_SHOWN = 5;

function cronOf(timing: { cron: string; timezone: string }): Cron {
  return new Cron(timing.cron, { timezone: timing.timezone, mode: "5-part", paused: true });
}

/** Refuses a cron that is not 5 fields or a zone that is not IANA, naming `<prefix>cron` etc. */
export function checkTiming(timing: ScheduleTiming, prefix = ""): ScheduleTiming {
  if (timing.kind === "at") {
    if (!Number.isSafeInteger(timing.at) || timing.at <= 0) {
      throw invalidArgument(`${prefix}at`, "must be a time after the epoch");
    }
    return timing;
  }
  if (timing.timezone === "") {
    throw invalidArgument(`${prefix}timezone`, "is required with a cron (an IANA name)");
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timing.timezone });
  } catch {
    throw invalidArgument(`${prefix}timezone`, `${timing.timezone} is not an IANA time zone`);
  }
  let cron: Cron;
  try {
    cron = cronOf(timing);
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern: /u, "") : "invalid";
    throw invalidArgument(`${prefix}cron`, `is not a 5-field cron: ${why}`);
  }
  if (cron.nextRun(new Date(0)) === null) {
    throw invalidArgument(`${prefix}cron`, "never fires");
  }
  return timing;
}

/** The first occurrence strictly after `afterMs`; undefined when there is none. */
export function occurrenceAfter(timing: ScheduleTiming, afterMs: number): number | undefined {
  if (timing.kind === "at") return timing.at > afterMs ? timing.at : undefined;
  return cronOf(timing).nextRun(new Date(afterMs))?.getTime();
}

/** The first occurrence of a schedule created (or resumed) at `nowMs`; a past `at` is due at once. */
export function firstOccurrence(timing: ScheduleTiming, nowMs: number): number | undefined {
  return timing.kind === "at" ? timing.at : occurrenceAfter(timing, nowMs);
}

/** The next `n` occurrences from `fromMs` on (the first may be `fromMs` itself). */
export function upcomingOccurrences(
  timing: ScheduleTiming,
  fromMs: number | undefined,
  n = UPCOMING_SHOWN,
): number[] {
  if (fromMs === undefined) return [];
  if (timing.kind === "at") return timing.at >= fromMs ? [timing.at] : [];
  return [
    fromMs,
    ...cronOf(timing)
      .nextRuns(n - 1, new Date(fromMs))
      .map((d) => d.getTime()),
  ];
}

export interface FirePlan {
  /** False when the occurrence was missed and catch_up is none: it is settled without a fire. */
  fire: boolean;
  /** The next regular occurrence, from max(now, this occurrence): never this one again. */
  nextFireAt: number | undefined;
}

/**
 * What to do with a claimed occurrence at the store's `nowMs`. The next occurrence counts from
 * the later of now and the occurrence, so an early or repeated wake cannot fire one twice and
 * every occurrence missed in an outage collapses into this fire (catch_up one) or into none: an
 * occurrence is missed when the one after it is already due.
 */
export function planFire(
  spec: ScheduleSpec,
  scheduledAt: number,
  nowMs: number,
  runNow: boolean,
): FirePlan {
  const nextFireAt = occurrenceAfter(spec.timing, Math.max(nowMs, scheduledAt));
  if (runNow) return { fire: true, nextFireAt };
  const following = occurrenceAfter(spec.timing, scheduledAt);
  const missed = following !== undefined && following <= nowMs;
  return { fire: !(missed && spec.catchUp === "none"), nextFireAt };
}
