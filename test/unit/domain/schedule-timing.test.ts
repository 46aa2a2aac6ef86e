// When a schedule fires (ADR 0020), with literal instants: cron occurrences in a time zone, the
// next occurrence from max(now, occurrence), catch_up one and none after an outage, one-offs, and
// the refusals naming the field.
import { describe, expect, test } from "vitest";
import { isTetherError } from "../../../src/domain/errors.js";
import {
  checkTiming,
  firstOccurrence,
  planFire,
  upcomingOccurrences,
} from "../../../src/domain/schedule-timing.js";
import type { ScheduleSpec, ScheduleTiming } from "../../../src/domain/schedules.js";

const at = (iso: string): number => Date.parse(iso);
const every5: ScheduleTiming = { kind: "cron", cron: "*/5 * * * *", timezone: "UTC" };
const spec = (catchUp: "one" | "none", timing: ScheduleTiming = every5): ScheduleSpec => ({
  target: { kind: "agent", agentId: "t:a", clientAgentId: "a" },
  timing,
  input: [{ type: "text", text: "x" }],
  catchUp,
});

function refusedField(timing: ScheduleTiming): string | undefined {
  try {
    checkTiming(timing);
    return undefined;
  } catch (error) {
    return isTetherError(error, "invalid_argument") ? error.violations[0]?.field : "other";
  }
}

describe("schedule timing", () => {
  test("a cron is read in its time zone: 09:00 in New York is 14:00 UTC before DST, 13:00 after", () => {
    const nine: ScheduleTiming = { kind: "cron", cron: "0 9 * * *", timezone: "America/New_York" };
    expect(firstOccurrence(nine, at("2026-03-01T00:00:00Z"))).toBe(at("2026-03-01T14:00:00Z"));
    expect(firstOccurrence(nine, at("2026-03-10T00:00:00Z"))).toBe(at("2026-03-10T13:00:00Z"));
  });

  test("upcoming lists the next five from the next occurrence on", () => {
    expect(upcomingOccurrences(every5, at("2026-03-01T10:05:00Z"))).toEqual([
      at("2026-03-01T10:05:00Z"),
      at("2026-03-01T10:10:00Z"),
      at("2026-03-01T10:15:00Z"),
      at("2026-03-01T10:20:00Z"),
      at("2026-03-01T10:25:00Z"),
    ]);
    expect(upcomingOccurrences(every5, undefined)).toEqual([]);
  });

  test("a fire on time moves to the following occurrence", () => {
    const now = at("2026-03-01T10:05:00.040Z");
    expect(planFire(spec("one"), at("2026-03-01T10:05:00Z"), now, false)).toEqual({
      fire: true,
      nextFireAt: at("2026-03-01T10:10:00Z"),
    });
  });

  test("a wake before the occurrence never plans that occurrence again", () => {
    const early = at("2026-03-01T10:04:59.900Z");
    expect(planFire(spec("one"), at("2026-03-01T10:05:00Z"), early, false).nextFireAt).toBe(
      at("2026-03-01T10:10:00Z"),
    );
  });

  test("after an outage catch_up one fires once and none skips, both resuming after now", () => {
    const occurrence = at("2026-03-01T10:05:00Z");
    const now = at("2026-03-01T10:27:00Z");
    expect(planFire(spec("one"), occurrence, now, false)).toEqual({
      fire: true,
      nextFireAt: at("2026-03-01T10:30:00Z"),
    });
    expect(planFire(spec("none"), occurrence, now, false)).toEqual({
      fire: false,
      nextFireAt: at("2026-03-01T10:30:00Z"),
    });
    // Late, but the following occurrence has not come yet: not missed.
    expect(planFire(spec("none"), occurrence, at("2026-03-01T10:09:00Z"), false).fire).toBe(true);
    // A run-now request always fires.
    expect(planFire(spec("none"), occurrence, now, true).fire).toBe(true);
  });

  test("a one-off fires once and has no next occurrence", () => {
    const once: ScheduleTiming = { kind: "at", at: at("2026-03-01T12:00:00Z") };
    expect(firstOccurrence(once, at("2026-03-01T13:00:00Z"))).toBe(at("2026-03-01T12:00:00Z"));
    expect(
      planFire(spec("one", once), at("2026-03-01T12:00:00Z"), at("2026-03-01T13:00:00Z"), false),
    ).toEqual({
      fire: true,
      nextFireAt: undefined,
    });
  });

  test("a bad cron or time zone is refused naming its field", () => {
    expect(refusedField({ kind: "cron", cron: "61 * * * *", timezone: "UTC" })).toBe("cron");
    expect(refusedField({ kind: "cron", cron: "0 0 * * * *", timezone: "UTC" })).toBe("cron");
    expect(refusedField({ kind: "cron", cron: "0 0 31 2 *", timezone: "UTC" })).toBe("cron");
    expect(refusedField({ kind: "cron", cron: "* * * * *", timezone: "Mars/Olympus" })).toBe(
      "timezone",
    );
    expect(refusedField({ kind: "cron", cron: "* * * * *", timezone: "" })).toBe("timezone");
    expect(refusedField({ kind: "at", at: 0 } as ScheduleTiming)).toBe("at");
    expect(refusedField(every5)).toBeUndefined();
  });
});
