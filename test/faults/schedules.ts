// Schedules under faults (ADR 0020): before the fault loop, one-off schedules are created, due
// one after another across the run, each into its own session; replicas are killed, paused and
// restarted and Redis restarted while they come due. After the run every occurrence must have
// fired exactly once: one run recorded, and the input once in its session's transcript.
// `schedule_fires_missed` counts occurrences with no run (or no input in the transcript) by the
// deadline; `schedule_fires_duplicated` those with more than one run or input. A share of them
// (`door`, spread evenly among the rest) are once automations made through the front door
// (door-schedules.ts), judged alike and reported apart as well as in the totals.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ScheduleService } from "../../src/gen/tether/v1/schedule_service_pb.js";
import { SessionService } from "../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role } from "../../src/gen/tether/v1/transcript_pb.js";
import { createVerificationReads, type VerificationReads } from "./verify-reads.js";
import { createDoorAutomation, judgeDoorAutomation } from "./door-schedules.js";
import { sleep } from "../support/wait-for.js";

export interface ScheduleFaultReport {
  schedules: number;
  schedule_fires_missed: number;
  schedule_fires_duplicated: number;
  /** From an occurrence's instant to its run's fired_at: max over the run. */
  max_fire_delay_ms: number;
  /** The share made through the front door, counted in the totals above too. */
  door: ScheduleShare;
  grpc: ScheduleShare;
  problems: string[];
}

export interface ScheduleShare {
  due: number;
  missed: number;
  duplicated: number;
}

interface Planned {
  /** The gRPC schedule's id, or the door automation's server id. */
  scheduleId: string;
  via: "grpc" | "door";
  sessionId: string;
  text: string;
  atMs: number;
}

/** Whether schedule `i` of `count` is one of the `door` made through the front door. */
export function madeThroughDoor(i: number, count: number, door: number): boolean {
  const share = Math.min(door, count) / Math.max(1, count);
  return Math.floor((i + 1) * share) > Math.floor(i * share);
}

const schedulesAt = (baseUrl: string) =>
  createClient(ScheduleService, createGrpcTransport({ baseUrl }));
const sessionsAt = (baseUrl: string) =>
  createClient(SessionService, createGrpcTransport({ baseUrl }));

/** Creates `count` one-off schedules due evenly across `spanMs` from now. */
export async function planSchedules(options: {
  addresses: readonly string[];
  prefix: string;
  count: number;
  /** Of `count`, those created as automations through the front door. */
  door: number;
  spanMs: number;
}): Promise<Planned[]> {
  // Replicas are starting up: each call may take a few tries (as many as the budget allows).
  const { onAny } = createVerificationReads({ budgetMs: 30_000 });
  const start = Date.now() + 2_000;
  const planned: Planned[] = [];
  for (let i = 0; i < options.count; i++) {
    const scheduleId = `${options.prefix}-s${i}`;
    const p = {
      scheduleId,
      sessionId: `${options.prefix}-target-${i}`,
      text: `scheduled ${scheduleId}`,
      atMs: start + Math.round((options.spanMs * i) / Math.max(1, options.count)),
    };
    await onAny(options.addresses, (url) =>
      sessionsAt(url).createSession({ sessionId: p.sessionId }),
    );
    if (madeThroughDoor(i, options.count, options.door)) {
      const made = await createDoorAutomation({
        addresses: options.addresses,
        name: scheduleId,
        sessionId: p.sessionId,
        text: p.text,
        plannedMs: p.atMs,
        budgetMs: 30_000,
        first: i,
      });
      planned.push({ ...p, via: "door", scheduleId: made.automationId, atMs: made.atMs });
      continue;
    }
    // Creation is idempotent on the id: a retry after an unknown outcome is harmless.
    await onAny(options.addresses, (url) =>
      schedulesAt(url).createSchedule({
        scheduleId,
        target: { case: "session", value: { sessionId: p.sessionId } },
        atMs: BigInt(p.atMs),
        input: [{ kind: { case: "text", value: p.text } }],
      }),
    );
    planned.push({ ...p, via: "grpc" });
  }
  return planned;
}

/**
 * Waits (up to `deadlineMs`) for every occurrence's run, then judges each once. The reads ride
 * out an outage the harness caused through `reads` (its retries are reported by the caller).
 */
export async function checkSchedules(
  addresses: readonly string[],
  planned: readonly Planned[],
  deadlineMs: number,
  reads: VerificationReads,
): Promise<ScheduleFaultReport> {
  const { onAny } = reads;
  const report: ScheduleFaultReport = {
    schedules: planned.length,
    schedule_fires_missed: 0,
    schedule_fires_duplicated: 0,
    max_fire_delay_ms: 0,
    door: { due: 0, missed: 0, duplicated: 0 },
    grpc: { due: 0, missed: 0, duplicated: 0 },
    problems: [],
  };
  const inputsOf = async (p: Planned) => {
    const { messages } = await onAny(addresses, (url) =>
      sessionsAt(url).listMessages({ sessionId: p.sessionId }, { timeoutMs: 10_000 }),
    );
    return messages.filter(
      (m) =>
        m.role === TranscriptMessage_Role.USER &&
        m.parts.some((part) => part.kind.case === "text" && part.kind.value === p.text),
    ).length;
  };
  const count = (p: Planned, outcome: "missed" | "duplicated", problem: string) => {
    report[outcome === "missed" ? "schedule_fires_missed" : "schedule_fires_duplicated"]++;
    report[p.via][outcome]++;
    report.problems.push(`${p.via} ${p.scheduleId}: ${problem}`);
  };
  for (const p of planned) {
    report[p.via].due++;
    if (p.via === "door") {
      const verdict = await judgeDoorAutomation(
        addresses,
        { ...p, automationId: p.scheduleId },
        deadlineMs,
        reads,
        () => inputsOf(p),
      );
      if (verdict.missed !== undefined) count(p, "missed", verdict.missed);
      else if (verdict.duplicated !== undefined) count(p, "duplicated", verdict.duplicated);
      for (const delay of verdict.delaysMs) {
        report.max_fire_delay_ms = Math.max(report.max_fire_delay_ms, delay);
      }
      continue;
    }
    let runs = await onAny(addresses, (url) =>
      schedulesAt(url).listScheduleRuns({ scheduleId: p.scheduleId }, { timeoutMs: 10_000 }),
    );
    let inputs: number;
    for (;;) {
      inputs = await inputsOf(p);
      if ((runs.runs.length > 0 && inputs > 0) || Date.now() > deadlineMs) break;
      await sleep(250);
      runs = await onAny(addresses, (url) =>
        schedulesAt(url).listScheduleRuns({ scheduleId: p.scheduleId }, { timeoutMs: 10_000 }),
      );
    }
    const fired = runs.runs.length;
    if (fired === 0 || inputs === 0) {
      count(p, "missed", `${fired} run(s), ${inputs} input(s) in the transcript`);
    } else if (fired > 1 || inputs > 1) {
      count(p, "duplicated", `${fired} runs, ${inputs} inputs in the transcript`);
    }
    for (const run of runs.runs) {
      report.max_fire_delay_ms = Math.max(report.max_fire_delay_ms, Number(run.firedAtMs) - p.atMs);
    }
  }
  return report;
}
