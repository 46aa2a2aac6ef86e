// Schedules (ADR 0020): a stored, tenant-scoped trigger whose fire is the ordinary durable input
// submission, keyed by (schedule, occurrence) so a fire repeated after a crash is a no-op.
import type { InputItem } from "./conversation.js";
import type { SessionId } from "./ids.js";

export type CatchUp = "one" | "none";
export type ScheduleBusyStrategy = "enqueue" | "steer" | "reject" | "interrupt";

/** Every fire into one session, or a new session of an agent per fire. */
export type ScheduleTarget =
  | { kind: "session"; sessionId: SessionId; busyStrategy: ScheduleBusyStrategy }
  | {
      kind: "agent";
      agentId: string;
      clientAgentId: string;
      version?: number;
      /** Client metadata every session a fire makes starts with (the front door's `metadata`). */
      sessionMetadata?: Record<string, string>;
    };

/** A 5-field cron in an IANA time zone, or one instant (epoch ms). */
export type ScheduleTiming =
  { kind: "cron"; cron: string; timezone: string } | { kind: "at"; at: number };

/** What the client configures; stored as one opaque JSON document the store never reads. */
export interface ScheduleSpec {
  target: ScheduleTarget;
  timing: ScheduleTiming;
  input: InputItem[];
  catchUp: CatchUp;
  /** The front door's automation fields (ADR 0037); absent on schedules made over gRPC. */
  name?: string;
  metadata?: Record<string, string>;
}

/** A schedule as stored: the client's spec plus the state the store keeps. */
export interface ScheduleRecord {
  tenant: string;
  scheduleId: string;
  /** The spec as JSON (see ScheduleSpec); its bytes decide whether a create is a replay. */
  spec: string;
  /** Bumped by every update: a fire claimed under an older revision does not move the timing. */
  revision: number;
  paused: boolean;
  pausedReason: string;
  /** The next regular occurrence (epoch ms); undefined when none is left (a fired one-off). */
  nextFireAt: number | undefined;
  /** The occurrence of the last fire (epoch ms). */
  lastFireAt: number | undefined;
  /** A run-now request waiting for its fire (epoch ms, the store's clock when it was asked). */
  runNowAt: number | undefined;
}

/** One fire as recorded: the input it submitted, or why nothing was submitted. */
export interface ScheduleRun {
  runId: string;
  scheduledAt: number;
  firedAt: number;
  sessionId: string;
  inputId?: string;
  error?: string;
  /** Set when the occurrence was settled without a fire (MISSED_WHILE_PAUSED); no input went. */
  skipReason?: string;
  /** A run-now's fire, not an occurrence of the timing (the front door's manual invocation). */
  manual?: boolean;
  /** What kind of refusal `error` is: the target refused for good, or was busy (reject). */
  errorKind?: "target_refused" | "target_busy";
}

/**
 * How a pause reason set by a refusing target begins (schedule-fire.ts): a pause the client asked
 * for is told from one its target caused by this prefix (the front door's `pause_reason`).
 */
export const TARGET_REFUSAL_PREFIX = "target ";

export const isTargetRefusal = (pausedReason: string): boolean =>
  pausedReason.startsWith(TARGET_REFUSAL_PREFIX);

/**
 * Why a one-off ends without a fire: its instant passed while the schedule was paused, and an
 * unpause never fires what it missed (ADR 0020). Its run records this instead of an input.
 */
export const MISSED_WHILE_PAUSED = "missed_while_paused";

export interface ScheduleRef {
  tenant: string;
  scheduleId: string;
}

/** An occurrence claimed for firing, under a token only its claimer knows. */
export interface ScheduleClaim {
  record: ScheduleRecord;
  /** The occurrence this claim fires; a re-claim after the claim lapsed names the same one. */
  scheduledAt: number;
  /** True when the occurrence is a run-now request, not the regular timing. */
  runNow: boolean;
  claimToken: string;
  /** The store's clock at the claim. */
  now: number;
}

export interface ScheduleFireCompletion {
  ref: ScheduleRef;
  claimToken: string;
  scheduledAt: number;
  /** The record's revision at the claim: a later update keeps its own timing. */
  revision: number;
  /** The next regular occurrence after this one; undefined when none is left. */
  nextFireAt: number | undefined;
  /** The fire's run record; undefined when the occurrence was skipped (catch_up none). */
  run?: ScheduleRun;
  /** Pauses the schedule with this reason (its target refused). */
  pauseReason?: string;
}

/** How many runs a schedule keeps (newest first); older ones are dropped as new ones land. */
export const SCHEDULE_RUNS_KEPT = 100;

/** The idempotency key of an occurrence's input: the same on every fire of that occurrence. */
export function occurrenceKey(scheduleId: string, scheduledAt: number): string {
  return `schedule:${scheduleId}:${scheduledAt}`;
}

export function parseScheduleSpec(json: string): ScheduleSpec {
  return JSON.parse(json) as ScheduleSpec;
}
