// Where state lives (ADR 0033's schema): TETHER_STORE and the Redis settings, including Sentinel
// discovery and the durability mode for surviving the loss of a primary (ADR 0017). Redis values
// are read only when TETHER_STORE=redis.
import type { RedisDurability } from "../store/redis/durability.js";
import {
  ConfigError,
  hostPorts,
  integer,
  oneOf,
  text,
  variable,
  type ConfigReader,
} from "./config-schema.js";

export interface SentinelConfig {
  /** host:port of each Sentinel; ioredis asks them for the current primary of `masterName`. */
  sentinels: { host: string; port: number }[];
  masterName: string;
  /** AUTH for the Sentinels themselves (the data nodes use TETHER_REDIS_PASSWORD). */
  sentinelPassword: string | undefined;
}

export type StoreConfig =
  | { kind: "memory" }
  | {
      kind: "redis";
      /** redis://… of a standalone server; unset when clusterNodes is set. */
      url: string | undefined;
      /** host:port seeds of a Redis Cluster. */
      clusterNodes: { host: string; port: number }[];
      password: string | undefined;
      /** A command with no reply by then fails as UNAVAILABLE (its outcome is unknown). */
      commandTimeoutMs: number;
      /** Discover the primary through Sentinel; exclusive with url and clusterNodes (ADR 0017). */
      sentinel: SentinelConfig | undefined;
      durability: RedisDurability;
    };

export const STORE_VARIABLES = {
  store: variable(
    "TETHER_STORE",
    "memory",
    oneOf(["memory", "redis"] as const),
    "`memory` (one process, state lost on exit) or `redis`",
  ),
  url: variable(
    "TETHER_REDIS_URL",
    undefined,
    text,
    "a standalone Redis (`redis://`, `rediss://`)",
  ),
  clusterNodes: variable(
    "TETHER_REDIS_CLUSTER_NODES",
    undefined,
    hostPorts,
    "Redis Cluster seeds `host:port,...`",
  ),
  password: variable("TETHER_REDIS_PASSWORD", undefined, text, "the Redis data nodes' password"),
  commandTimeoutMs: variable(
    "TETHER_REDIS_COMMAND_TIMEOUT_MS",
    "5000",
    integer(100, 10 * 60 * 1000),
    "a Redis call with no reply by then fails as `UNAVAILABLE`; it is never sent again",
  ),
  sentinels: variable(
    "TETHER_REDIS_SENTINELS",
    undefined,
    hostPorts,
    "find the primary through Redis Sentinel (`host:port,...`), in place of `TETHER_REDIS_URL` (ADR 0017)",
  ),
  sentinelMaster: variable(
    "TETHER_REDIS_SENTINEL_MASTER",
    undefined,
    text,
    "the name the Sentinels monitor",
  ),
  sentinelPassword: variable(
    "TETHER_REDIS_SENTINEL_PASSWORD",
    undefined,
    text,
    "the Sentinels' own password",
  ),
  durability: variable(
    "TETHER_REDIS_DURABILITY",
    "async",
    oneOf(["async", "replicated"] as const),
    "`async`: acknowledged on the primary; `replicated`: every acknowledgement and read waits (`WAIT`) for replicas (ADR 0017)",
  ),
  minReplicas: variable(
    "TETHER_REDIS_MIN_REPLICAS",
    "1",
    integer(1, 64),
    "replicas `replicated` waits for",
  ),
  waitTimeoutMs: variable(
    "TETHER_REDIS_WAIT_TIMEOUT_MS",
    "1000",
    integer(1, 60 * 60 * 1000),
    "how long `replicated` waits before the call fails `UNAVAILABLE` (retry with the same key)",
  ),
} as const;

const V = STORE_VARIABLES;

export function loadStoreConfig(read: ConfigReader): StoreConfig {
  const kind = read.get(V.store);
  if (kind === "memory") return { kind };
  const url = read.get(V.url);
  const clusterNodes = read.get(V.clusterNodes) ?? [];
  const sentinel = sentinelOf(read);
  if (url === undefined && clusterNodes.length === 0 && sentinel === undefined) {
    throw new ConfigError(
      V.url.name,
      "TETHER_STORE=redis needs TETHER_REDIS_URL, TETHER_REDIS_CLUSTER_NODES or TETHER_REDIS_SENTINELS",
    );
  }
  if (url !== undefined && !/^rediss?:\/\//u.test(url)) {
    throw new ConfigError(V.url.name, "must start with redis:// or rediss://");
  }
  const commandTimeoutMs = read.get(V.commandTimeoutMs);
  return {
    kind,
    url,
    clusterNodes,
    password: read.get(V.password),
    commandTimeoutMs,
    sentinel,
    durability: durabilityOf(read, commandTimeoutMs),
  };
}

/** TETHER_REDIS_SENTINELS and its companions; undefined when Sentinel is not configured. */
function sentinelOf(read: ConfigReader): SentinelConfig | undefined {
  const masterName = read.get(V.sentinelMaster);
  if (!read.isSet(V.sentinels)) {
    if (masterName !== undefined) {
      throw new ConfigError(V.sentinelMaster.name, "is set but TETHER_REDIS_SENTINELS is not");
    }
    return undefined;
  }
  for (const other of [V.url, V.clusterNodes]) {
    if (read.isSet(other)) {
      throw new ConfigError(V.sentinels.name, `set it or ${other.name}, not both`);
    }
  }
  const sentinels = read.get(V.sentinels) ?? [];
  if (sentinels.length === 0) {
    throw new ConfigError(V.sentinels.name, "is set but names no host:port");
  }
  if (masterName === undefined) {
    throw new ConfigError(
      V.sentinelMaster.name,
      "TETHER_REDIS_SENTINELS needs the monitored master's name",
    );
  }
  if (!/^[A-Za-z0-9._-]{1,128}$/u.test(masterName)) {
    throw new ConfigError(
      V.sentinelMaster.name,
      `"${masterName}" is not a master name (letters, digits, '.', '_', '-')`,
    );
  }
  return { sentinels, masterName, sentinelPassword: read.get(V.sentinelPassword) };
}

/**
 * The durability mode with its replica count and timeout. WAIT must give up before the command
 * timeout would cut it off, or every slow confirmation would read as an outage instead of too few
 * replicas.
 */
function durabilityOf(read: ConfigReader, commandTimeoutMs: number): RedisDurability {
  const mode = read.get(V.durability);
  const minReplicas = read.get(V.minReplicas);
  const timeoutMs = read.get(V.waitTimeoutMs);
  if (mode === "async") return { mode };
  if (timeoutMs >= commandTimeoutMs) {
    throw new ConfigError(
      V.waitTimeoutMs.name,
      `must be less than TETHER_REDIS_COMMAND_TIMEOUT_MS (${commandTimeoutMs}), got ${timeoutMs}`,
    );
  }
  return { mode, minReplicas, timeoutMs };
}
