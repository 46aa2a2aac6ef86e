// Schedules between the wire and the domain (ADR 0020). The spec a request carries becomes one
// canonical JSON document (fixed key order), so "the same body" is byte equality in the store.
import { create } from "@bufbuild/protobuf";
import { invalidArgument } from "../../domain/errors.js";
import { checkTiming, upcomingOccurrences } from "../../domain/schedule-timing.js";
import {
  parseScheduleSpec,
  type ScheduleRecord,
  type ScheduleRun,
  type ScheduleSpec,
  type ScheduleTarget,
  type ScheduleTiming,
} from "../../domain/schedules.js";
import type {
  CreateScheduleRequest,
  Schedule as SchedulePb,
  ScheduleRun as ScheduleRunPb,
} from "../../gen/tether/v1/schedule_service_pb.js";
import { CatchUp } from "../../gen/tether/v1/schedule_service_pb.js";
import { BusyStrategy as BusyStrategyPb, InputPartSchema } from "../../gen/tether/v1/turn_pb.js";
import type { TenantScope } from "../tenancy.js";
import { busyStrategyFromProto, inputFromProto } from "./turn.js";
import { fromInt64, fromUint64 } from "./scalars.js";

const SCHEDULE_ID = /^[A-Za-z0-9._-]{1,100}$/u;
const MAX_INPUT_PARTS = 32;

/** Schedule ids end up in session ids (sched-<id>-<ms>), so they are narrower than those. */
export function checkScheduleId(id: string): string {
  if (!SCHEDULE_ID.test(id)) {
    throw invalidArgument(
      "schedule_id",
      "must be 1-100 characters of letters, digits, '.', '_' or '-'",
    );
  }
  return id;
}

type SpecFields = Omit<CreateScheduleRequest, "$typeName" | "$unknown" | "scheduleId">;

function targetFromProto(req: SpecFields, scope: TenantScope): ScheduleTarget {
  switch (req.target.case) {
    case "session":
      return {
        kind: "session",
        sessionId: scope.toStore(req.target.value.sessionId, "session.session_id"),
        busyStrategy: busyStrategyFromProto(req.target.value.busyStrategy),
      };
    case "agent": {
      const { agentId, agentVersion } = req.target.value;
      const version = fromUint64(agentVersion, "agent.agent_version");
      return {
        kind: "agent",
        agentId: scope.toStore(agentId, "agent.agent_id"),
        clientAgentId: agentId,
        ...(version !== 0 && { version }),
      };
    }
    default:
      throw invalidArgument("target", "must be session or agent");
  }
}

function timingFromProto(req: SpecFields): ScheduleTiming {
  const at = fromInt64(req.atMs, "at_ms");
  if (req.cron !== "" && at !== 0) throw invalidArgument("at_ms", "must be 0 with a cron");
  if (req.cron === "") {
    if (at === 0) throw invalidArgument("cron", "must be set, or at_ms for a one-off");
    if (req.timezone !== "") throw invalidArgument("timezone", "is only for a cron");
    return checkTiming({ kind: "at", at }, "");
  }
  return checkTiming({ kind: "cron", cron: req.cron.trim(), timezone: req.timezone }, "");
}

/** The validated spec and its canonical JSON. */
export function specFromProto(
  req: SpecFields,
  scope: TenantScope,
): { spec: ScheduleSpec; json: string } {
  const target = targetFromProto(req, scope);
  const timing = timingFromProto(req);
  if (req.input.length === 0) throw invalidArgument("input", "must not be empty");
  if (req.input.length > MAX_INPUT_PARTS) {
    throw invalidArgument("input", `must hold at most ${MAX_INPUT_PARTS} parts`);
  }
  const input = inputFromProto(req.input);
  input.forEach((item, i) => {
    // A schedule is stored as JSON and shown back: image bytes would bloat both, a URL does not.
    if (item.type === "image" && item.image.kind === "inline") {
      throw invalidArgument(`input[${i}].image`, "a schedule takes image URLs, not inline data");
    }
  });
  const catchUp = req.catchUp === CatchUp.NONE ? "none" : "one";
  const spec: ScheduleSpec = { target, timing, input, catchUp };
  return { spec, json: JSON.stringify({ target, timing, input, catchUp }) };
}

const BUSY: Record<string, BusyStrategyPb> = {
  enqueue: BusyStrategyPb.ENQUEUE,
  steer: BusyStrategyPb.STEER,
  reject: BusyStrategyPb.REJECT,
  interrupt: BusyStrategyPb.INTERRUPT,
};

const ms = (value: number | undefined): bigint => BigInt(value ?? 0);

export function scheduleToProto(
  record: ScheduleRecord,
  scope: TenantScope,
): Omit<SchedulePb, "$typeName"> {
  const spec = parseScheduleSpec(record.spec);
  const { target, timing } = spec;
  return {
    scheduleId: record.scheduleId,
    target:
      target.kind === "session"
        ? {
            case: "session",
            value: {
              $typeName: "tether.v1.SessionTarget",
              sessionId: scope.toClient(target.sessionId),
              busyStrategy: BUSY[target.busyStrategy] ?? BusyStrategyPb.ENQUEUE,
            },
          }
        : {
            case: "agent",
            value: {
              $typeName: "tether.v1.AgentTarget",
              agentId: target.clientAgentId,
              agentVersion: BigInt(target.version ?? 0),
            },
          },
    cron: timing.kind === "cron" ? timing.cron : "",
    timezone: timing.kind === "cron" ? timing.timezone : "",
    atMs: timing.kind === "at" ? BigInt(timing.at) : 0n,
    input: spec.input.map((item) =>
      create(
        InputPartSchema,
        item.type === "text"
          ? { kind: { case: "text", value: item.text } }
          : {
              kind: {
                case: "image",
                value: {
                  source: { case: "url", value: item.image.kind === "url" ? item.image.url : "" },
                },
              },
            },
      ),
    ),
    catchUp: spec.catchUp === "none" ? CatchUp.NONE : CatchUp.ONE,
    paused: record.paused,
    pausedReason: record.pausedReason,
    nextFireAtMs: ms(record.nextFireAt),
    lastFireAtMs: ms(record.lastFireAt),
    upcomingMs: record.paused
      ? []
      : upcomingOccurrences(timing, record.nextFireAt).map((t) => BigInt(t)),
    revision: BigInt(record.revision),
  };
}

export function runToProto(run: ScheduleRun): Omit<ScheduleRunPb, "$typeName"> {
  return {
    runId: run.runId,
    scheduledAtMs: BigInt(run.scheduledAt),
    firedAtMs: BigInt(run.firedAt),
    sessionId: run.sessionId,
    inputId: run.inputId ?? "",
    error: run.error ?? "",
    skipReason: run.skipReason ?? "",
  };
}
