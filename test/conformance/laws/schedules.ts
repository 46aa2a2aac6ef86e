// Schedules (ADR 0020): creation is idempotent on the id; an occurrence is claimed by one
// claimer at a time, lease-like, and settled only under that claim; a lapsed claim is re-claimed
// with the same occurrence; nothing is due early; pause, unpause, run-now and delete keep the due
// index right; an unpause records a one-off missed while paused instead of firing it; runs are kept newest first and bounded. Instants far in the past are due on every
// backend's clock, far in the future never. Runs on memory, Redis and Redis Cluster; not on the
// wire (ADR 0020 says why).
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import {
  MISSED_WHILE_PAUSED,
  SCHEDULE_RUNS_KEPT,
  type ScheduleRef,
  type ScheduleRun,
} from "../../../src/domain/schedules.js";
import type { ScheduleStore } from "../../../src/ports/schedule-store.js";
import { expectTetherError, violationFields } from "../support/expectations.js";
import { LONG_TTL_MS, PAST_SHORT_TTL_MS, SHORT_TTL_MS } from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const PAST = 1_000;
const FUTURE = 4_000_000_000_000;
const LATER = 4_100_000_000_000;

const freshRef = (): ScheduleRef => ({
  tenant: `t-${randomUUID().slice(0, 8)}`,
  scheduleId: `s-${randomUUID().slice(0, 8)}`,
});
const runOf = (scheduledAt: number, n = 1): ScheduleRun => ({
  runId: `run-${n}`,
  scheduledAt,
  firedAt: scheduledAt + 5,
  sessionId: "target",
  inputId: `input-${n}`,
});

export function describeScheduleLaws(factory: StoreFactory): void {
  describe("schedules", () => {
    const harness = useStoreHarness(factory);
    const s = (): ScheduleStore => {
      const store = harness().schedules;
      if (!store) throw new Error("this backend's harness has no schedule store");
      return store;
    };
    const create = (ref: ScheduleRef, nextFireAt: number | undefined, spec = '{"v":1}') =>
      s().createSchedule({ ...ref, spec, nextFireAt });

    test("creation is idempotent on the id: the same spec answers the stored schedule, another spec is a conflict that changes nothing", async () => {
      const ref = freshRef();
      const created = await create(ref, FUTURE);
      expect(created.kind).toBe("created");
      expect(created.record).toMatchObject({ revision: 1, paused: false, nextFireAt: FUTURE });
      expect(await create(ref, LATER)).toEqual({ kind: "existing", record: created.record });
      const conflict = await create(ref, LATER, '{"v":2}');
      expect(conflict).toEqual({ kind: "conflict", record: created.record });
      expect(await s().getSchedule(ref)).toEqual(created.record);
    });

    test("an occurrence fires once: claimed, settled with the next one, then nothing is due", async () => {
      const ref = freshRef();
      await create(ref, PAST);
      expect((await s().dueSchedules(10)).due).toEqual([ref]);
      const claim = await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS);
      expect(claim).toMatchObject({ scheduledAt: PAST, runNow: false, claimToken: "tok-a" });
      const revision = claim?.record.revision ?? -1;
      const settled = await s().completeScheduleFire({
        ref,
        claimToken: "tok-a",
        scheduledAt: PAST,
        revision,
        nextFireAt: FUTURE,
        run: runOf(PAST),
      });
      expect(settled).toBe(true);
      expect(await s().claimScheduleFire(ref, "tok-b", LONG_TTL_MS)).toBeUndefined();
      expect(await s().getSchedule(ref)).toMatchObject({ nextFireAt: FUTURE, lastFireAt: PAST });
      expect(await s().listScheduleRuns(ref, 10)).toEqual([runOf(PAST)]);
      const due = await s().dueSchedules(10);
      expect(due.due).toEqual([]);
      expect(due.nextDueAt).toBe(FUTURE);
    });

    test("an early wake finds nothing: an occurrence not yet due is neither listed nor claimable", async () => {
      const ref = freshRef();
      await create(ref, FUTURE);
      expect((await s().dueSchedules(10)).due).toEqual([]);
      expect(await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS)).toBeUndefined();
      expect(await s().getSchedule(ref)).toMatchObject({
        nextFireAt: FUTURE,
        lastFireAt: undefined,
      });
    });

    test("of concurrent claimers of one occurrence exactly one wins", async () => {
      const ref = freshRef();
      await create(ref, PAST);
      const claims = await Promise.all(
        ["a", "b", "c", "d", "e"].map((t) => s().claimScheduleFire(ref, `tok-${t}`, LONG_TTL_MS)),
      );
      expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
    });

    test("a lapsed claim is re-claimed with the same occurrence; the stale claimer's completion changes nothing", async () => {
      const ref = freshRef();
      await create(ref, PAST);
      const first = await s().claimScheduleFire(ref, "tok-a", SHORT_TTL_MS);
      expect(first?.scheduledAt).toBe(PAST);
      expect(await s().claimScheduleFire(ref, "tok-b", LONG_TTL_MS)).toBeUndefined();
      await harness().advanceTime(PAST_SHORT_TTL_MS);
      const second = await s().claimScheduleFire(ref, "tok-b", LONG_TTL_MS);
      expect(second).toMatchObject({ scheduledAt: PAST, claimToken: "tok-b" });
      const stale = {
        ref,
        claimToken: "tok-a",
        scheduledAt: PAST,
        revision: 1,
        nextFireAt: FUTURE,
        run: runOf(PAST, 1),
      };
      expect(await s().completeScheduleFire(stale)).toBe(false);
      expect(await s().listScheduleRuns(ref, 10)).toEqual([]);
      expect(await s().completeScheduleFire({ ...stale, claimToken: "tok-b" })).toBe(true);
      expect(await s().completeScheduleFire({ ...stale, claimToken: "tok-b" })).toBe(false);
      expect(await s().listScheduleRuns(ref, 10)).toEqual([runOf(PAST, 1)]);
    });

    test("a paused schedule is not due; unpausing resumes it at the occurrence given", async () => {
      const ref = freshRef();
      await create(ref, PAST);
      expect(await s().pauseSchedule(ref, "by hand")).toMatchObject({
        paused: true,
        pausedReason: "by hand",
      });
      expect((await s().dueSchedules(10)).due).toEqual([]);
      expect(await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS)).toBeUndefined();
      expect(await s().unpauseSchedule(ref, PAST + 1)).toMatchObject({
        paused: false,
        pausedReason: "",
        nextFireAt: PAST + 1,
      });
      expect(await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS)).toMatchObject({
        scheduledAt: PAST + 1,
      });
    });

    test("unpausing with a missed one-off records its run and leaves nothing due, only when its due, unclaimed occurrence is the one named", async () => {
      const missedRun = (scheduledAt: number): ScheduleRun => ({
        runId: `run-${scheduledAt}`,
        scheduledAt,
        firedAt: scheduledAt + 7,
        sessionId: "target",
        skipReason: MISSED_WHILE_PAUSED,
      });
      // Missed: recorded, and the one-off has no occurrence left.
      const missed = freshRef();
      await create(missed, PAST);
      await s().pauseSchedule(missed, "by hand");
      expect(await s().unpauseSchedule(missed, undefined, missedRun(PAST))).toMatchObject({
        paused: false,
        nextFireAt: undefined,
        lastFireAt: undefined,
      });
      expect(await s().listScheduleRuns(missed, 10)).toEqual([missedRun(PAST)]);
      expect((await s().dueSchedules(10)).due).toEqual([]);
      expect(await s().claimScheduleFire(missed, "tok-a", LONG_TTL_MS)).toBeUndefined();
      // Already running: an unpause changes nothing and records nothing.
      expect(await s().unpauseSchedule(missed, undefined, missedRun(PAST))).toMatchObject({
        paused: false,
      });
      expect(await s().listScheduleRuns(missed, 10)).toHaveLength(1);

      // Not yet due, or another occurrence than the stored one: dropped, the stored one kept.
      for (const [stored, named] of [
        [FUTURE, FUTURE],
        [PAST, PAST + 1],
      ] as const) {
        const ref = freshRef();
        await create(ref, stored);
        await s().pauseSchedule(ref, "by hand");
        expect(await s().unpauseSchedule(ref, undefined, missedRun(named))).toMatchObject({
          paused: false,
          nextFireAt: stored,
        });
        expect(await s().listScheduleRuns(ref, 10)).toEqual([]);
      }

      // Claimed before the pause: the claim settles it; the unpause records nothing.
      const claimed = freshRef();
      await create(claimed, PAST);
      const claim = await s().claimScheduleFire(claimed, "tok-c", LONG_TTL_MS);
      expect(claim?.scheduledAt).toBe(PAST);
      await s().pauseSchedule(claimed, "by hand");
      expect(await s().unpauseSchedule(claimed, undefined, missedRun(PAST))).toMatchObject({
        paused: false,
        nextFireAt: PAST,
      });
      expect(await s().listScheduleRuns(claimed, 10)).toEqual([]);
      const settled = await s().completeScheduleFire({
        ref: claimed,
        claimToken: "tok-c",
        scheduledAt: PAST,
        revision: claim?.record.revision ?? -1,
        nextFireAt: undefined,
        run: runOf(PAST),
      });
      expect(settled).toBe(true);
      expect(await s().listScheduleRuns(claimed, 10)).toEqual([runOf(PAST)]);
    });

    test("a completion that pauses records its run and leaves the schedule paused with the reason", async () => {
      const ref = freshRef();
      await create(ref, PAST);
      await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS);
      const run = { ...runOf(PAST), inputId: undefined, error: "session deleted" };
      delete run.inputId;
      expect(
        await s().completeScheduleFire({
          ref,
          claimToken: "tok-a",
          scheduledAt: PAST,
          revision: 1,
          nextFireAt: PAST + 10,
          run,
          pauseReason: "target session deleted",
        }),
      ).toBe(true);
      expect(await s().getSchedule(ref)).toMatchObject({
        paused: true,
        pausedReason: "target session deleted",
      });
      expect((await s().dueSchedules(10)).due).toEqual([]);
      expect(await s().listScheduleRuns(ref, 10)).toEqual([run]);
    });

    test("run-now fires once besides the regular timing, which it leaves as it was", async () => {
      const ref = freshRef();
      await create(ref, FUTURE);
      const asked = await s().runScheduleNow(ref);
      const at = asked?.runNowAt ?? -1;
      expect(at).toBeGreaterThan(PAST);
      expect((await s().dueSchedules(10)).due).toEqual([ref]);
      const claim = await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS);
      expect(claim).toMatchObject({ scheduledAt: at, runNow: true });
      await s().completeScheduleFire({
        ref,
        claimToken: "tok-a",
        scheduledAt: at,
        revision: 1,
        nextFireAt: LATER,
        run: runOf(at),
      });
      expect(await s().getSchedule(ref)).toMatchObject({
        nextFireAt: FUTURE,
        runNowAt: undefined,
        lastFireAt: at,
      });
      expect(await s().claimScheduleFire(ref, "tok-b", LONG_TTL_MS)).toBeUndefined();
    });

    test("run-now at a given instant: a waiting request is kept, an instant already fired asks nothing", async () => {
      const ref = freshRef();
      await create(ref, FUTURE);
      const at = PAST + 5;
      expect(await s().runScheduleNow(ref, at)).toMatchObject({ runNowAt: at });
      // Another instant while one waits joins it.
      expect(await s().runScheduleNow(ref, at + 1)).toMatchObject({ runNowAt: at });
      const claim = await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS);
      expect(claim).toMatchObject({ scheduledAt: at, runNow: true });
      await s().completeScheduleFire({
        ref,
        claimToken: "tok-a",
        scheduledAt: at,
        revision: 1,
        nextFireAt: FUTURE,
        run: runOf(at),
      });
      // Asked again at the instant that fired (a retry): nothing waits, nothing fires.
      expect(await s().runScheduleNow(ref, at)).toMatchObject({ runNowAt: undefined });
      expect(await s().claimScheduleFire(ref, "tok-b", LONG_TTL_MS)).toBeUndefined();
      // A later instant is a new request.
      expect(await s().runScheduleNow(ref, at + 1)).toMatchObject({ runNowAt: at + 1 });
    });

    test("an update during a claim keeps its own timing when the claim settles", async () => {
      const ref = freshRef();
      await create(ref, PAST);
      await s().claimScheduleFire(ref, "tok-a", LONG_TTL_MS);
      const updated = await s().updateSchedule({ ...ref, spec: '{"v":2}', nextFireAt: LATER });
      expect(updated).toMatchObject({ revision: 2, spec: '{"v":2}', nextFireAt: LATER });
      await s().completeScheduleFire({
        ref,
        claimToken: "tok-a",
        scheduledAt: PAST,
        revision: 1,
        nextFireAt: FUTURE,
        run: runOf(PAST),
      });
      expect(await s().getSchedule(ref)).toMatchObject({ nextFireAt: LATER, lastFireAt: PAST });
    });

    test(`runs are listed newest first and only the newest ${SCHEDULE_RUNS_KEPT} are kept`, async () => {
      const ref = freshRef();
      await create(ref, PAST);
      for (let n = 1; n <= SCHEDULE_RUNS_KEPT + 2; n += 1) {
        const claim = await s().claimScheduleFire(ref, `tok-${n}`, LONG_TTL_MS);
        expect(claim?.scheduledAt).toBe(PAST + n - 1);
        await s().completeScheduleFire({
          ref,
          claimToken: `tok-${n}`,
          scheduledAt: PAST + n - 1,
          revision: 1,
          nextFireAt: PAST + n,
          run: runOf(PAST + n - 1, n),
        });
      }
      const runs = await s().listScheduleRuns(ref, 1000);
      expect(runs).toHaveLength(SCHEDULE_RUNS_KEPT);
      expect(runs[0]?.runId).toBe(`run-${SCHEDULE_RUNS_KEPT + 2}`);
      expect(runs.at(-1)?.runId).toBe("run-3");
    });

    test("delete removes the schedule, its runs and its due entry; a tenant lists only its own, by id", async () => {
      const ref = freshRef();
      const other = { tenant: ref.tenant, scheduleId: `${ref.scheduleId}-b` };
      const stranger = { tenant: `${ref.tenant}x`, scheduleId: ref.scheduleId };
      await create(ref, PAST);
      await create(other, FUTURE);
      await create(stranger, FUTURE);
      const ids = async (after?: string) =>
        (await s().listSchedules(ref.tenant, { limit: 1, ...(after ? { after } : {}) })).map(
          (r) => r.scheduleId,
        );
      expect(await ids()).toEqual([ref.scheduleId]);
      expect(await ids(ref.scheduleId)).toEqual([other.scheduleId]);
      expect(await ids(other.scheduleId)).toEqual([]);
      expect(await s().deleteSchedule(ref)).toBe(true);
      expect(await s().deleteSchedule(ref)).toBe(false);
      expect(await s().getSchedule(ref)).toBeUndefined();
      expect((await s().dueSchedules(10)).due).toEqual([]);
      expect(await s().listScheduleRuns(ref, 10)).toEqual([]);
      expect(await s().pauseSchedule(ref, "x")).toBeUndefined();
    });

    test("a bad schedule id or instant is invalid_argument naming the field", async () => {
      const ref = freshRef();
      const noId = await expectTetherError(
        () => s().createSchedule({ ...ref, scheduleId: "", spec: "{}", nextFireAt: PAST }),
        "invalid_argument",
      );
      expect(violationFields(noId)).toEqual(["schedule_id"]);
      const badAt = await expectTetherError(
        () => s().createSchedule({ ...ref, spec: "{}", nextFireAt: -5 }),
        "invalid_argument",
      );
      expect(violationFields(badAt)).toEqual(["nextFireAt"]);
      expect(await s().getSchedule(ref)).toBeUndefined();
    });
  });
}
