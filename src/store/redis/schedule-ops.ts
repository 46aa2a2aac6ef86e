// The schedule port on Redis: one script per state change, every key in the `{sched}` slot,
// due times and claim expiry by the Redis clock (ADR 0020). Reads of one key are plain commands.
import type { Cluster, Redis } from "ioredis";
import { TetherError } from "../../domain/errors.js";
import {
  SCHEDULE_RUNS_KEPT,
  type ScheduleRecord,
  type ScheduleRef,
  type ScheduleRun,
} from "../../domain/schedules.js";
import type { ScheduleStore } from "../../ports/schedule-store.js";
import { withChecks } from "../shared/checked.js";
import { scheduleChecks } from "../shared/schedule-checks.js";
import { checkNamespace, scheduleDueMember, scheduleKeys } from "./keys.js";
import { REPLY } from "./replies.js";
import {
  ASYNC_DURABILITY,
  confirmRead,
  withDurability,
  type RedisDurability,
} from "./durability.js";
import { createScriptRunner, toStoreError } from "./scripts.js";

const FIELDS = ["tenant", "id", "spec", "rev", "paused", "reason", "next", "last", "runnow"];

const instant = (value: unknown): number | undefined =>
  value === null || value === undefined || value === "" ? undefined : Number(value);
const slot = (value: number | undefined): string => (value === undefined ? "" : String(value));

/** A record from the script reply's (or HMGET's) fields, in FIELDS order. */
function decodeRecord(values: readonly unknown[]): ScheduleRecord {
  const [tenant, id, spec, rev, paused, reason, next, last, runNow] = values;
  if (typeof tenant !== "string" || typeof id !== "string" || typeof spec !== "string") {
    throw new TetherError("internal", "a stored schedule is malformed");
  }
  return {
    tenant,
    scheduleId: id,
    spec,
    revision: Number(rev),
    paused: paused === "1",
    pausedReason: typeof reason === "string" ? reason : "",
    nextFireAt: instant(next),
    lastFireAt: instant(last),
    runNowAt: instant(runNow),
  };
}

function decodeRun(json: string): ScheduleRun {
  return JSON.parse(json) as ScheduleRun;
}

/** What a schedule's firing reads and settles (the scheduler's side of the port). */
type FireOps = Pick<
  ScheduleStore,
  "dueSchedules" | "claimScheduleFire" | "completeScheduleFire" | "listScheduleRuns"
>;

/** What both halves share: the connection, its script runner, and the schedule keys. */
interface ScheduleRedis {
  redis: Redis | Cluster;
  scripts: ReturnType<typeof createScriptRunner>;
  durability: RedisDurability;
  keys: ReturnType<typeof scheduleKeys>;
  member: (ref: ScheduleRef) => string;
  hash: (ref: ScheduleRef) => string;
}

export function createRedisScheduleStore(options: {
  redis: Redis | Cluster;
  namespace?: string;
  /** The store's durability (ADR 0017): what a client sets is acknowledged like a commit. */
  durability?: RedisDurability;
}): ScheduleStore {
  const { redis } = options;
  const keys = scheduleKeys(checkNamespace(options.namespace ?? "tether"));
  const durability = options.durability ?? ASYNC_DURABILITY;
  const on: ScheduleRedis = {
    redis,
    scripts: withDurability(createScriptRunner(redis), durability),
    durability,
    keys,
    member: (ref) => scheduleDueMember(ref.tenant, ref.scheduleId),
    hash: (ref) => keys.schedule(ref.tenant, ref.scheduleId),
  };
  return withChecks(scheduleChecks, { ...recordOps(on), ...fireOps(on) });
}

/** What a client does to its schedules: create, change, pause, resume, ask for a run. */
function recordOps(on: ScheduleRedis): Omit<ScheduleStore, keyof FireOps> {
  const { redis, scripts, durability, keys, member, hash } = on;

  async function read(ref: ScheduleRef): Promise<ScheduleRecord | undefined> {
    let values: unknown[];
    try {
      values = await redis.hmget(hash(ref), ...FIELDS);
    } catch (error) {
      throw toStoreError(error);
    }
    // A schedule read is a read of what a client set: confirmed like the store's `read` scripts.
    await confirmRead(redis, durability, hash(ref));
    return values[0] === null ? undefined : decodeRecord(values);
  }

  /** Runs a script that answers {OK, record...} or {NONE}. */
  async function change(
    name: "updateSchedule" | "pauseSchedule" | "runScheduleNow",
    ref: ScheduleRef,
    args: readonly (string | number)[],
  ): Promise<ScheduleRecord | undefined> {
    const reply = await scripts.run(name, [hash(ref), keys.due], [...args, member(ref)]);
    return reply[0] === REPLY.NONE ? undefined : decodeRecord(reply.slice(1));
  }

  return {
    async createSchedule(draft) {
      const reply = await scripts.run(
        "createSchedule",
        [hash(draft), keys.tenantIndex(draft.tenant), keys.due],
        [draft.tenant, draft.scheduleId, draft.spec, slot(draft.nextFireAt), member(draft)],
      );
      const record = decodeRecord(reply.slice(1));
      if (reply[0] === REPLY.DEDUPLICATED) return { kind: "existing", record };
      if (reply[0] === REPLY.EXISTS) return { kind: "conflict", record };
      return { kind: "created", record };
    },

    async updateSchedule(draft) {
      return change("updateSchedule", draft, [draft.spec, slot(draft.nextFireAt)]);
    },

    async deleteSchedule(ref) {
      const reply = await scripts.run(
        "deleteSchedule",
        [hash(ref), keys.tenantIndex(ref.tenant), keys.due, keys.runs(ref.tenant, ref.scheduleId)],
        [ref.scheduleId, member(ref)],
      );
      return reply[1] === 1;
    },

    async getSchedule(ref) {
      return read(ref);
    },

    async listSchedules(tenant, { after, limit }) {
      let ids: string[];
      try {
        ids = await redis.zrangebylex(
          keys.tenantIndex(tenant),
          after === undefined ? "-" : `(${after}`,
          "+",
          "LIMIT",
          0,
          limit,
        );
      } catch (error) {
        throw toStoreError(error);
      }
      const records = await Promise.all(ids.map((scheduleId) => read({ tenant, scheduleId })));
      return records.filter((r): r is ScheduleRecord => r !== undefined);
    },

    pauseSchedule: (ref, reason) => change("pauseSchedule", ref, [reason]),

    async unpauseSchedule(ref, nextFireAt, missed) {
      const reply = await scripts.run(
        "unpauseSchedule",
        [hash(ref), keys.due, keys.runs(ref.tenant, ref.scheduleId)],
        [
          slot(nextFireAt),
          member(ref),
          missed ? String(missed.scheduledAt) : "",
          missed ? JSON.stringify(missed) : "",
          SCHEDULE_RUNS_KEPT,
        ],
      );
      return reply[0] === REPLY.NONE ? undefined : decodeRecord(reply.slice(1));
    },

    runScheduleNow: (ref, at) => change("runScheduleNow", ref, [at ?? ""]),
  };
}

/** What the scheduler does: find what is due, claim an occurrence, settle it, read the runs. */
function fireOps({ redis, scripts, keys, member, hash }: ScheduleRedis): FireOps {
  return {
    async dueSchedules(limit) {
      const reply = await scripts.run("readDueSchedules", [keys.due], [limit]);
      const due = reply.slice(3).map((m) => {
        const [tenant, scheduleId] = JSON.parse(String(m)) as [string, string];
        return { tenant, scheduleId };
      });
      return { now: Number(reply[1]), due, nextDueAt: instant(reply[2]) };
    },

    async claimScheduleFire(ref, token, ttl) {
      const reply = await scripts.run(
        "claimScheduleFire",
        [hash(ref), keys.due],
        [token, ttl, member(ref)],
      );
      if (reply[0] === REPLY.NONE) return undefined;
      return {
        scheduledAt: Number(reply[1]),
        runNow: reply[2] === 1,
        now: Number(reply[3]),
        record: decodeRecord(reply.slice(4)),
        claimToken: token,
      };
    },

    async completeScheduleFire(c) {
      const { ref } = c;
      const reply = await scripts.run(
        "completeScheduleFire",
        [hash(ref), keys.due, keys.runs(ref.tenant, ref.scheduleId)],
        [
          c.claimToken,
          String(c.scheduledAt),
          String(c.revision),
          slot(c.nextFireAt),
          c.run ? JSON.stringify(c.run) : "",
          c.pauseReason === undefined ? "0" : "1",
          SCHEDULE_RUNS_KEPT,
          c.pauseReason ?? "",
          member(ref),
        ],
      );
      return reply[0] === REPLY.OK;
    },

    async listScheduleRuns(ref, limit) {
      try {
        const runs = await redis.lrange(keys.runs(ref.tenant, ref.scheduleId), 0, limit - 1);
        return runs.map(decodeRun);
      } catch (error) {
        throw toStoreError(error);
      }
    },
  };
}
