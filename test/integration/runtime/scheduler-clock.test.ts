// The schedule poller on a manual clock (ADR 0020): a memory schedule store whose clock the test
// moves, a real runtime behind the fires. An every-minute cron fires once per minute however
// often the poller wakes; after an outage catch_up one fires once and none skips to the next
// occurrence on time; a fire repeated for one occurrence (its claimer died before settling)
// submits nothing new.
import { describe, expect, test } from "vitest";
import { parseSessionId, type SessionId } from "../../../src/domain/ids.js";
import { fenceOf } from "../../../src/domain/lease.js";
import { firstOccurrence } from "../../../src/domain/schedule-timing.js";
import type { ScheduleRef, ScheduleSpec } from "../../../src/domain/schedules.js";
import { createManualClock } from "../../../src/ports/clock.js";
import { createModelProvider } from "../../../src/providers/index.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { createScheduleFirer, startScheduler } from "../../../src/runtime/index.js";
import { createMemoryScheduleStore } from "../../../src/store/memory/schedule-ops.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const at = (iso: string): number => Date.parse(iso);

type AnnouncePause = (ref: ScheduleRef, reason: string, occurrenceMs: number) => Promise<void>;

async function setUp(
  catchUp: "one" | "none",
  busyStrategy: "enqueue" | "reject" = "enqueue",
  pollMaxMs?: number,
  announcePause?: AnnouncePause,
) {
  const clock = createManualClock(at("2026-03-01T10:00:30Z"));
  const schedules = createMemoryScheduleStore({ clock });
  const harness = createRuntimeHarness({ provider: createModelProvider({ kind: "echo" }) });
  const firer = createScheduleFirer(harness.deps, harness.runtime.driver);
  const deps = { sleep: harness.deps.sleep, logger: silentLogger };
  // Without pollMaxMs the test drives the rounds; with it the poller runs on its own.
  const scheduler = startScheduler(
    {
      ...{ schedules, firer, deps },
      ...(pollMaxMs !== undefined && { pollMaxMs }),
      ...(announcePause && { announcePause }),
    },
    pollMaxMs !== undefined,
  );
  const sessionId: SessionId = parseSessionId("default:minutely-target");
  await harness.store.commit({ sessionId, expectedHeadRevision: 0, appendMessages: [] });
  const spec: ScheduleSpec = {
    target: { kind: "session", sessionId, busyStrategy },
    timing: { kind: "cron", cron: "* * * * *", timezone: "UTC" },
    input: [{ type: "text", text: "tick" }],
    catchUp,
  };
  const ref: ScheduleRef = { tenant: "default", scheduleId: "minutely" };
  await schedules.createSchedule({
    ...ref,
    spec: JSON.stringify(spec),
    nextFireAt: firstOccurrence(spec.timing, clock.nowMs()),
  });
  const fired = async () =>
    (await schedules.listScheduleRuns(ref, 100))
      .map((r) => new Date(r.scheduledAt).toISOString())
      .reverse();
  return { clock, schedules, harness, firer, scheduler, sessionId, ref, spec, fired };
}

describe("schedule poller on a manual clock", () => {
  test("an every-minute cron fires once per minute, however often the poller wakes", async () => {
    const { clock, scheduler, fired, schedules, ref } = await setUp("one");
    await scheduler.pollOnce();
    expect(await fired()).toEqual([]);
    clock.set(at("2026-03-01T10:01:00Z"));
    await scheduler.pollOnce();
    await scheduler.pollOnce();
    clock.advance(59_000);
    await scheduler.pollOnce();
    expect(await fired()).toEqual(["2026-03-01T10:01:00.000Z"]);
    clock.advance(1_000);
    await scheduler.pollOnce();
    await scheduler.pollOnce();
    expect(await fired()).toEqual(["2026-03-01T10:01:00.000Z", "2026-03-01T10:02:00.000Z"]);
    expect((await schedules.getSchedule(ref))?.nextFireAt).toBe(at("2026-03-01T10:03:00Z"));
  });

  test("after an outage catch_up one fires once for every missed occurrence, then resumes on time", async () => {
    const { clock, scheduler, fired, schedules, ref } = await setUp("one");
    clock.set(at("2026-03-01T10:10:30Z"));
    await scheduler.pollOnce();
    await scheduler.pollOnce();
    expect(await fired()).toEqual(["2026-03-01T10:01:00.000Z"]);
    const runs = await schedules.listScheduleRuns(ref, 10);
    expect(runs[0]?.firedAt).toBe(at("2026-03-01T10:10:30Z"));
    expect((await schedules.getSchedule(ref))?.nextFireAt).toBe(at("2026-03-01T10:11:00Z"));
  });

  test("after an outage catch_up none fires nothing missed, then the next occurrence on time", async () => {
    const { clock, scheduler, fired, schedules, ref } = await setUp("none");
    clock.set(at("2026-03-01T10:10:30Z"));
    await scheduler.pollOnce();
    expect(await fired()).toEqual([]);
    expect((await schedules.getSchedule(ref))?.nextFireAt).toBe(at("2026-03-01T10:11:00Z"));
    clock.set(at("2026-03-01T10:11:00Z"));
    await scheduler.pollOnce();
    expect(await fired()).toEqual(["2026-03-01T10:11:00.000Z"]);
  });

  test("a fire repeated after its claimer died before settling submits nothing new: one run, one input, one turn", async () => {
    const { clock, scheduler, schedules, firer, harness, sessionId, ref, spec } =
      await setUp("one");
    clock.set(at("2026-03-01T10:01:00Z"));
    // A replica claims and fires, then dies before settling: its claim lapses.
    const claim = await schedules.claimScheduleFire(ref, "dead-replica", 1_000);
    expect(claim?.scheduledAt).toBe(at("2026-03-01T10:01:00Z"));
    const first = await firer.fire(claim!, spec);
    clock.advance(2_000);
    await scheduler.pollOnce();
    const runs = await schedules.listScheduleRuns(ref, 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.inputId).toBe(first.run.inputId);
    const snapshot = await waitFor(
      async () => {
        const s = await harness.store.loadSession(sessionId);
        return s && s.messages.length >= 2 ? s : undefined;
      },
      { what: "the fired turn's messages in the store" },
    );
    await harness.runtime.drain(2_000);
    const roles = snapshot.messages.map((m) => (JSON.parse(m) as { role: string }).role);
    expect(roles).toEqual(["user", "assistant"]);
    expect(snapshot.messages[0]).toContain('"tick"');
    expect(snapshot.turnIndex).toBe(1);
  });

  test("a pause is announced before it is settled; an announcement that fails leaves the fire to be retried, announced again for the same occurrence", async () => {
    const announced: [string, string, string][] = [];
    let failNext = true;
    const announce: AnnouncePause = (ref, reason, occurrenceMs) => {
      announced.push([ref.scheduleId, reason, new Date(occurrenceMs).toISOString()]);
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error("outbox unreachable"));
      }
      return Promise.resolve();
    };
    const { clock, scheduler, schedules, harness, sessionId, ref } = await setUp(
      "one",
      "enqueue",
      undefined,
      announce,
    );
    expect(await harness.store.deleteSession(sessionId)).toBe(true);
    clock.set(at("2026-03-01T10:01:00Z"));
    await scheduler.pollOnce();
    const reason = "target session minutely-target does not exist";
    expect(announced).toEqual([["minutely", reason, "2026-03-01T10:01:00.000Z"]]);
    // The failed announcement left the pause unsettled: not paused yet, the claim still held.
    expect((await schedules.getSchedule(ref))?.paused).toBe(false);
    clock.advance(60_000);
    await scheduler.pollOnce();
    expect(announced).toEqual([
      ["minutely", reason, "2026-03-01T10:01:00.000Z"],
      ["minutely", reason, "2026-03-01T10:01:00.000Z"],
    ]);
    expect(await schedules.getSchedule(ref)).toMatchObject({ paused: true, pausedReason: reason });
  });

  test("busy_strategy reject records a busy fire as an error without pausing; the next occurrence fires", async () => {
    const { clock, scheduler, schedules, harness, sessionId, ref, fired } = await setUp(
      "one",
      "reject",
    );
    const holder = {
      ownerId: "other-replica",
      incarnationId: "other-replica:1",
      liveness: { kind: "opaque" as const },
    };
    const claimed = await harness.store.tryClaimLease(sessionId, holder, 600_000);
    expect(claimed.kind).toBe("acquired");
    clock.set(at("2026-03-01T10:01:00Z"));
    await scheduler.pollOnce();
    const runs = await schedules.listScheduleRuns(ref, 10);
    expect(runs.map((r) => [r.sessionId, r.inputId, r.error])).toEqual([
      ["minutely-target", undefined, "session minutely-target was busy (busy_strategy reject)"],
    ]);
    expect(await schedules.getSchedule(ref)).toMatchObject({ paused: false, pausedReason: "" });
    if (claimed.kind === "acquired") await harness.store.releaseLease(fenceOf(claimed.lease));
    clock.set(at("2026-03-01T10:02:00Z"));
    await scheduler.pollOnce();
    expect(await fired()).toEqual(["2026-03-01T10:01:00.000Z", "2026-03-01T10:02:00.000Z"]);
    expect((await schedules.listScheduleRuns(ref, 1))[0]?.error).toBeUndefined();
  });

  test("a wake cuts the poller's sleep short: a due schedule fires long before the next round", async () => {
    const { clock, scheduler, fired } = await setUp("one", "enqueue", 600_000);
    clock.set(at("2026-03-01T10:01:00Z"));
    scheduler.wake();
    await waitFor(async () => (await fired()).length === 1, { what: "the woken round's fire" });
    await scheduler.stop();
    expect(await fired()).toEqual(["2026-03-01T10:01:00.000Z"]);
  });
});
