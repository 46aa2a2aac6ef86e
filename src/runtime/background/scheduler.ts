// The schedule poller (ADR 0020): one per replica, no leader. It asks the store which schedules
// are due, claims each occurrence (the store lets one claimer win), fires it and settles the
// claim. It sleeps until the next due time, at most `pollMaxMs`, and wakes early when this
// replica creates or changes a schedule; other replicas see a change within one interval.
import { randomUUID } from "node:crypto";
import type { ScheduleRef } from "../../domain/schedules.js";
import { parseScheduleSpec } from "../../domain/schedules.js";
import { planFire } from "../../domain/schedule-timing.js";
import type { ScheduleStore } from "../../ports/schedule-store.js";
import type { RuntimeDeps } from "../deps.js";
import type { ScheduleFirer } from "./schedule-fire.js";

export interface SchedulerOptions {
  schedules: ScheduleStore;
  firer: ScheduleFirer;
  deps: Pick<RuntimeDeps, "sleep" | "logger">;
  /** The longest sleep between looks (1 s by default). */
  pollMaxMs?: number;
  /** How long a claimed occurrence is this replica's before another may re-fire it (30 s). */
  claimTtlMs?: number;
  /** Schedules looked at per round (32). */
  batch?: number;
  /**
   * Tells the world a schedule pauses (the `schedule.paused` webhook), before the pause is
   * settled: a failure leaves the claim to lapse and the same occurrence to be fired again.
   */
  announcePause?: (ref: ScheduleRef, reason: string, occurrenceMs: number) => Promise<void>;
}

export interface Scheduler {
  /**
   * One round: fires every due occurrence this replica wins; returns how long until the next
   * due time by the store's clock (undefined: nothing scheduled), never mixing in this clock.
   */
  pollOnce(): Promise<number | undefined>;
  /** Cuts the current sleep short (a schedule was created, changed or asked to run now). */
  wake(): void;
  stop(): Promise<void>;
}

export function startScheduler(options: SchedulerOptions, autoStart = true): Scheduler {
  const { schedules, firer, deps } = options;
  const pollMaxMs = options.pollMaxMs ?? 1_000;
  const claimTtlMs = options.claimTtlMs ?? 30_000;
  const batch = options.batch ?? 32;
  let stopped = false;
  let sleeper = new AbortController();

  async function fireOne(ref: ScheduleRef): Promise<void> {
    const token = randomUUID();
    const claim = await schedules.claimScheduleFire(ref, token, claimTtlMs);
    // Another replica won this occurrence, or it is no longer due.
    if (!claim) return;
    const spec = parseScheduleSpec(claim.record.spec);
    const plan = planFire(spec, claim.scheduledAt, claim.now, claim.runNow);
    // A fire that throws (store unavailable) is not settled: the claim lapses and the same
    // occurrence is fired again, which its idempotency key makes a no-op if it landed.
    const outcome = plan.fire ? await firer.fire(claim, spec) : undefined;
    if (outcome?.pauseReason !== undefined) {
      await options.announcePause?.(ref, outcome.pauseReason, claim.scheduledAt);
    }
    const settled = await schedules.completeScheduleFire({
      ref,
      claimToken: token,
      scheduledAt: claim.scheduledAt,
      revision: claim.record.revision,
      nextFireAt: plan.nextFireAt,
      ...(outcome && { run: outcome.run }),
      ...(outcome?.pauseReason !== undefined && { pauseReason: outcome.pauseReason }),
    });
    deps.logger.info(
      {
        ...ref,
        scheduledAt: claim.scheduledAt,
        runNow: claim.runNow,
        fired: plan.fire,
        nextFireAt: plan.nextFireAt,
        sessionId: outcome?.run.sessionId,
        error: outcome?.run.error,
        paused: outcome?.pauseReason !== undefined,
        settled,
      },
      "schedule occurrence",
    );
  }

  async function pollOnce(): Promise<number | undefined> {
    const look = await schedules.dueSchedules(batch);
    for (const ref of look.due) {
      try {
        await fireOne(ref);
      } catch (error) {
        deps.logger.warn(
          { ...ref, err: error },
          "schedule fire failed: retried when its claim lapses",
        );
      }
    }
    // A full batch may have more behind it: look again at once.
    if (look.due.length >= batch) return 0;
    return look.nextDueAt === undefined ? undefined : Math.max(0, look.nextDueAt - look.now);
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      let wait = pollMaxMs;
      try {
        const untilNext = await pollOnce();
        if (untilNext !== undefined) wait = Math.min(pollMaxMs, untilNext);
      } catch (error) {
        deps.logger.warn({ err: error }, "schedule poll failed");
      }
      if (stopped) break;
      await deps.sleep(wait, sleeper.signal).catch(() => undefined);
      sleeper = new AbortController();
    }
  }

  const running = autoStart ? loop() : Promise.resolve();
  return {
    pollOnce,
    wake: () => sleeper.abort(),
    async stop() {
      stopped = true;
      sleeper.abort();
      await running;
    },
  };
}
