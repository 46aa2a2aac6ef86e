// The Redis settings for surviving the loss of a primary (ADR 0017): Sentinel discovery and the
// durability mode. Parsed from TETHER_REDIS_* at start; config.ts turns a problem into its
// ConfigError naming the variable.
import type { RedisDurability } from "../store/redis/durability.js";

export interface SentinelConfig {
  /** host:port of each Sentinel; ioredis asks them for the current primary of `masterName`. */
  sentinels: { host: string; port: number }[];
  masterName: string;
  /** AUTH for the Sentinels themselves (the data nodes use TETHER_REDIS_PASSWORD). */
  sentinelPassword: string | undefined;
}

export class RedisConfigProblem extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = "RedisConfigProblem";
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/u.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new RedisConfigProblem(
      name,
      `must be an integer between ${min} and ${max}, got "${raw}"`,
    );
  }
  return Number(raw);
}

/** host:port,… as a list; `variable` names the setting in the refusal. */
export function parseHostPorts(variable: string, raw: string): { host: string; port: number }[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((node) => {
      const match = /^(.+):(\d{1,5})$/u.exec(node);
      const port = Number(match?.[2]);
      if (!match?.[1] || port < 1 || port > 65535) {
        throw new RedisConfigProblem(variable, `"${node}" is not host:port`);
      }
      return { host: match[1], port };
    });
}

/** TETHER_REDIS_SENTINELS and its companions; undefined when Sentinel is not configured. */
export function parseSentinel(env: Env): SentinelConfig | undefined {
  const raw = text(env, "TETHER_REDIS_SENTINELS");
  const masterName = text(env, "TETHER_REDIS_SENTINEL_MASTER");
  if (raw === undefined) {
    if (masterName !== undefined) {
      throw new RedisConfigProblem(
        "TETHER_REDIS_SENTINEL_MASTER",
        "is set but TETHER_REDIS_SENTINELS is not",
      );
    }
    return undefined;
  }
  for (const other of ["TETHER_REDIS_URL", "TETHER_REDIS_CLUSTER_NODES"]) {
    if (text(env, other) !== undefined) {
      throw new RedisConfigProblem("TETHER_REDIS_SENTINELS", `set it or ${other}, not both`);
    }
  }
  const sentinels = parseHostPorts("TETHER_REDIS_SENTINELS", raw);
  if (sentinels.length === 0) {
    throw new RedisConfigProblem("TETHER_REDIS_SENTINELS", "is set but names no host:port");
  }
  if (masterName === undefined) {
    throw new RedisConfigProblem(
      "TETHER_REDIS_SENTINEL_MASTER",
      "TETHER_REDIS_SENTINELS needs the monitored master's name",
    );
  }
  if (!/^[A-Za-z0-9._-]{1,128}$/u.test(masterName)) {
    throw new RedisConfigProblem(
      "TETHER_REDIS_SENTINEL_MASTER",
      `"${masterName}" is not a master name (letters, digits, '.', '_', '-')`,
    );
  }
  return { sentinels, masterName, sentinelPassword: text(env, "TETHER_REDIS_SENTINEL_PASSWORD") };
}

/**
 * TETHER_REDIS_DURABILITY (async | replicated), TETHER_REDIS_MIN_REPLICAS and
 * TETHER_REDIS_WAIT_TIMEOUT_MS. WAIT must give up before the command timeout would cut it off,
 * or every slow confirmation would read as an outage instead of too few replicas.
 */
export function parseDurability(env: Env, commandTimeoutMs: number): RedisDurability {
  const mode = text(env, "TETHER_REDIS_DURABILITY") ?? "async";
  if (mode !== "async" && mode !== "replicated") {
    throw new RedisConfigProblem(
      "TETHER_REDIS_DURABILITY",
      `must be one of async, replicated, got "${mode}"`,
    );
  }
  const minReplicas = integer(env, "TETHER_REDIS_MIN_REPLICAS", 1, 1, 64);
  const timeoutMs = integer(env, "TETHER_REDIS_WAIT_TIMEOUT_MS", 1_000, 1, 60 * 60 * 1000);
  if (mode === "async") return { mode };
  if (timeoutMs >= commandTimeoutMs) {
    throw new RedisConfigProblem(
      "TETHER_REDIS_WAIT_TIMEOUT_MS",
      `must be less than TETHER_REDIS_COMMAND_TIMEOUT_MS (${commandTimeoutMs}), got ${timeoutMs}`,
    );
  }
  return { mode, minReplicas, timeoutMs };
}
