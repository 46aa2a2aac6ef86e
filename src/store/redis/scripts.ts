// Loads the Lua scripts of lua/ and runs them through ioredis `defineCommand`, which sends
// EVALSHA and falls back to EVAL once per connection. Each file is `<operation>-<keys>.lua`;
// the key count comes from the name (`n`: each call gives it; `<min>-<max>`: the last keys are
// optional, ADR 0024). Each script is sent as the reply table, the prelude, the helper files it
// includes (`--- @include "name"`, ADR 0035), then its own text.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ChainableCommander, Cluster, Redis } from "ioredis";
import { TetherError, storeUnavailable } from "../../domain/errors.js";
import { resolveIncludes } from "./lua-includes.js";
import { luaReplyTable } from "./replies.js";

export const SCRIPT_NAMES = [
  "claimLease",
  "reclaimLease",
  "renewLease",
  "renewLeases",
  "releaseLease",
  "releaseIfIdle",
  "readLease",
  "enqueueWork",
  "listWork",
  "cancelWork",
  "claimReadyWork",
  "claimWorkByIds",
  "submitInput",
  "startTurn",
  "listInputs",
  "cancelInputs",
  "claimInputs",
  "deferActiveInputs",
  "commit",
  "loadSession",
  "readSessionSummary",
  "deleteSession",
  "vacuum",
  "appendEvents",
  "recordToolCalls",
  "answerToolCalls",
  "closeToolCalls",
  "readToolCalls",
  "parkTurn",
  "resumeTurn",
  "cancelParkedTurn",
  "readParkedTurn",
  "readTurns",
  "readTurn",
  "createAgent",
  "updateAgent",
  "getAgent",
  "deleteAgent",
  "readRevision",
  "rewindSession",
  "forkSession",
  "listenTurn",
  "unlistenTurn",
  "readEvents",
  "admitTurn",
  "chargeTokens",
  "checkTokenQuota",
  "releaseTurnSlot",
  "renewTurnSlots",
  "readQuotaUsage",
  "takeStorageSlot",
  "releaseStorageSlot",
  "countStorageSlots",
  "chargeTenantSpend",
  "createSchedule",
  "updateSchedule",
  "deleteSchedule",
  "pauseSchedule",
  "unpauseSchedule",
  "runScheduleNow",
  "readDueSchedules",
  "claimScheduleFire",
  "completeScheduleFire",
  "enqueueWebhookEvent",
  "claimOutbox",
  "settleOutbox",
  "settleOutboxBatch",
  "expectOutbox",
  "settleOutboxHint",
  "createWebhookEndpoint",
  "readWebhookEndpoints",
  "readWebhookEndpointsSince",
  "updateWebhookEndpoint",
  "deleteWebhookEndpoint",
  "recordWebhookDelivery",
  "listWebhookDeliveries",
  "claimIdempotencyKey",
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** A script reply: the reply code first, then strings and integers. */
export type ScriptReply = [number, ...(string | number | null)[]];

export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
  mark?: string;
}

/** How long a read's mark (ReplicaWait.mark) lives: it only has to reach the replicas. */
const MARK_TTL_MS = 1_000;

export interface ScriptRunner {
  run(
    name: ScriptName,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<ScriptReply>;
  /**
   * Runs the script, then `WAIT replicas timeoutMs` on the same connection (on a cluster, the
   * node that ran the script: both go in one pipeline for the script's slot). Resolves with the
   * reply and how many replicas confirmed the script's writes (durability.ts).
   *
   * `mark`: a key of the script's slot written between the script and WAIT. WAIT covers only
   * what its own connection wrote, so a read marks: the mark moves this connection's replication
   * offset past every write the read can have seen, whoever made it, and a confirmed WAIT then
   * says the replicas hold all of it.
   */
  runAndWait(
    name: ScriptName,
    keys: readonly string[],
    args: readonly (string | number)[],
    wait: ReplicaWait,
  ): Promise<{ reply: ScriptReply; replicas: number }>;
}

interface LoadedScript {
  command: string;
  /**
   * Undefined for `<operation>-n.lua` and `<operation>-<min>-<max>.lua`: each call gives its key
   * count (any, or within the range).
   */
  numberOfKeys: number | undefined;
  keyRange: [number, number] | undefined;
  lua: string;
}

const LUA_DIR = fileURLToPath(new URL("./lua/", import.meta.url));
const FILE_NAME = /^([A-Za-z]+)-(\d+(?:-\d+)?|n)\.lua$/u;
/** `_<name>.lua`: a helper file, inlined into the scripts that include it. */
const HELPER_FILE = /^_([a-z][a-z0-9-]*)\.lua$/u;
/** The helper file every script starts with (after the reply table); no script includes it. */
const PRELUDE = "prelude";

let loaded: Map<ScriptName, LoadedScript> | undefined;

function loadScripts(): Map<ScriptName, LoadedScript> {
  if (loaded) return loaded;
  let files: string[];
  try {
    files = readdirSync(LUA_DIR);
  } catch (error) {
    // The build copies src/store/redis/lua next to the compiled module (package.json "build").
    throw new Error(`the Redis store's Lua scripts are missing from ${LUA_DIR}`, { cause: error });
  }
  const helpers = new Map<string, string>();
  for (const file of files) {
    const helper = HELPER_FILE.exec(file);
    if (helper) helpers.set(helper[1] as string, readFileSync(LUA_DIR + file, "utf8"));
  }
  const preludeText = helpers.get(PRELUDE);
  if (preludeText === undefined) throw new Error(`_${PRELUDE}.lua is missing from ${LUA_DIR}`);
  const prelude = luaReplyTable() + preludeText;
  const scripts = new Map<ScriptName, LoadedScript>();
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) continue;
    const name = match[1] as ScriptName;
    if (!SCRIPT_NAMES.includes(name)) throw new Error(`unexpected Lua script ${file}`);
    if (scripts.has(name)) {
      // A stale build left an older file of the same operation next to the current one.
      throw new Error(`two Lua scripts for ${name} in ${LUA_DIR}: rebuild into a clean directory`);
    }
    // The script's own text comes last and unchanged, so a script on the wire ends with its file.
    const body = resolveIncludes(file, readFileSync(LUA_DIR + file, "utf8"), (n) => helpers.get(n));
    const counts = match[2] === "n" ? undefined : (match[2] as string).split("-").map(Number);
    const [min, max] = [counts?.[0], counts?.at(-1)];
    scripts.set(name, {
      command: `tether_${name}`,
      numberOfKeys: min !== undefined && min === max ? min : undefined,
      keyRange: min !== undefined && max !== undefined ? [min, max] : undefined,
      lua: `${prelude}\n${body}`,
    });
  }
  for (const name of SCRIPT_NAMES) {
    if (!scripts.has(name)) throw new Error(`missing Lua script for ${name}`);
  }
  loaded = scripts;
  return scripts;
}

/** Each script's Lua as sent to Redis (tests and the size report of ADR 0035 read it). */
export function scriptSources(): ReadonlyMap<ScriptName, string> {
  return new Map([...loadScripts()].map(([name, script]) => [name, script.lua]));
}

type ScriptCommand = (...args: (string | number)[]) => Promise<unknown>;

/**
 * Errors Redis raises while it cannot serve, as opposed to a script or protocol fault. The last:
 * on a Cluster a failover can leave a pipeline's WAIT (it has no key, so it is not redirected)
 * on a node that has just become a replica; the write was not confirmed, and a retry with the
 * same key is as safe as after any unconfirmed WAIT.
 */
const UNAVAILABLE_REPLY =
  /^(?:(?:CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|BUSY|READONLY|NOREPLICAS|MOVED|ASK)\b|ERR WAIT cannot be used with replica instances)/u;

/** Maps any failure of a Redis call to a typed error; raw Redis messages never escape. */
export function toStoreError(error: unknown): TetherError {
  if (error instanceof TetherError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const isReply = error instanceof Error && error.name === "ReplyError";
  if (isReply && message.startsWith("EXECABORT")) {
    // A MULTI whose queued commands were refused: as available as the reasons it was refused
    // for (a cluster node restarting answers CLUSTERDOWN, TRYAGAIN or LOADING while queueing).
    const previous = (error as { previousErrors?: unknown[] }).previousErrors ?? [];
    const reasons = previous.map((e) => (e instanceof Error ? e.message : String(e)));
    if (reasons.length > 0 && reasons.every((r) => UNAVAILABLE_REPLY.test(r))) {
      return storeUnavailable("Redis refused a transaction while unavailable", error);
    }
  }
  if (isReply && !UNAVAILABLE_REPLY.test(message)) {
    return new TetherError("internal", "the Redis store rejected a script call", { cause: error });
  }
  return storeUnavailable("Redis did not answer", error);
}

export function createScriptRunner(redis: Redis | Cluster): ScriptRunner {
  const scripts = loadScripts();
  const commands = redis as unknown as Record<string, ScriptCommand | undefined>;
  for (const script of scripts.values()) {
    // The same connection may serve several stores; the definition is identical, so keep it.
    if (typeof commands[script.command] !== "function") {
      redis.defineCommand(script.command, {
        lua: script.lua,
        ...(script.numberOfKeys !== undefined && { numberOfKeys: script.numberOfKeys }),
      });
    }
  }
  const scriptFor = (name: ScriptName, keys: readonly string[]): LoadedScript => {
    const script = scripts.get(name) as LoadedScript;
    const [min, max] = script.keyRange ?? [1, Infinity];
    if (keys.length < min || keys.length > max) {
      throw new TetherError("internal", `script ${name} takes ${min} to ${max} keys`);
    }
    return script;
  };
  const argsOf = (
    script: LoadedScript,
    keys: readonly string[],
    args: readonly (string | number)[],
  ) => (script.numberOfKeys === undefined ? [keys.length, ...keys, ...args] : [...keys, ...args]);
  return {
    async run(name, keys, args) {
      const script = scriptFor(name, keys);
      const command = commands[script.command] as ScriptCommand;
      let reply: unknown;
      try {
        reply = await command.call(redis, ...argsOf(script, keys, args));
      } catch (error) {
        throw toStoreError(error);
      }
      return checkedReply(name, reply);
    },
    async runAndWait(name, keys, args, wait) {
      const script = scriptFor(name, keys);
      const pipeline = redis.pipeline();
      const queued = pipeline as unknown as Record<string, ScriptCommand>;
      // Queued, not sent: a pipeline's command answers through exec() below.
      void (queued[script.command] as ScriptCommand).call(pipeline, ...argsOf(script, keys, args));
      queueWait(pipeline, wait);
      const replies = await execWait(pipeline);
      const waited = replies.pop();
      return { reply: checkedReply(name, replies[0]), replicas: Number(waited) };
    },
  };
}

function queueWait(pipeline: ChainableCommander, wait: ReplicaWait): void {
  if (wait.mark !== undefined) pipeline.call("SET", wait.mark, "1", "PX", MARK_TTL_MS);
  pipeline.call("WAIT", wait.replicas, wait.timeoutMs);
}

/**
 * Sends a pipeline that ends with queueWait's commands; resolves with every reply in order (the
 * WAIT's, the count of replicas, last), or fails with the first command's failure.
 */
async function execWait(pipeline: ChainableCommander): Promise<unknown[]> {
  let results: [Error | null, unknown][] | null;
  try {
    results = await pipeline.exec();
  } catch (error) {
    throw toStoreError(error);
  }
  if (!results || results.length !== pipeline.length) {
    throw storeUnavailable("Redis did not answer a pipeline");
  }
  const failed = results.find(([error]) => error);
  if (failed) throw toStoreError(failed[0]);
  return results.map(([, reply]) => reply);
}

/**
 * Marks `wait.mark` and waits, with no script before: how many replicas hold everything the
 * caller has read so far from the mark's slot (on any connection: replication offsets are the
 * node's, and the mark is written after the read returned).
 */
export async function markAndWait(
  redis: Redis | Cluster,
  wait: ReplicaWait & { mark: string },
): Promise<number> {
  const pipeline = redis.pipeline();
  queueWait(pipeline, wait);
  return Number((await execWait(pipeline)).at(-1));
}

function checkedReply(name: ScriptName, reply: unknown): ScriptReply {
  if (!Array.isArray(reply) || typeof reply[0] !== "number") {
    throw new TetherError("internal", `script ${name} gave a malformed reply`);
  }
  return reply as ScriptReply;
}
