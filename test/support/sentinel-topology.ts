// A Redis Sentinel topology on loopback for tests: one primary, replicas attached with
// `replicaof`, and three redis-sentinel processes monitoring it, all on free ports. Sentinel
// comes from the Debian package redis-sentinel (scripts/setup-machine.sh installs it).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import {
  freePort,
  redisPid,
  stablePort,
  startRedis,
  waitForPing,
  type RedisProcess,
} from "./redis-harness.js";
import { sleep, waitFor } from "./wait-for.js";

export const SENTINEL_MASTER = "tether-primary";

export interface SentinelTopology {
  masterName: string;
  sentinels: { host: string; port: number }[];
  /** The data nodes, the first started as primary; a failover changes which one is. */
  nodes: RedisProcess[];
  /** The port Sentinel names as the primary now. */
  primaryPort(): Promise<number>;
  /** SENTINEL FAILOVER; resolves with the new primary's port once it accepts writes. */
  failover(): Promise<number>;
  /**
   * SIGKILLs the primary; resolves with the port Sentinel promotes once it accepts writes. With
   * `replicasStoppedMs`, the replicas are stopped (SIGSTOP) that long first and continued right
   * after the kill: the primary's last writes of that span never reach a replica.
   */
  killPrimary(options?: { replicasStoppedMs?: number; promotionWaitMs?: number }): Promise<number>;
  /** Starts a killed node again on its port, as a replica of `primary` (default: Sentinel's). */
  revive(port: number, primary?: number): Promise<void>;
  /** Whether the node on `port` was killed (and not revived since). */
  isDown(port: number): boolean;
  /** Every Sentinel's log so far, one after another. */
  sentinelLogs(): Promise<string>;
  /** The node on `port`. */
  node(port: number): RedisProcess;
  /**
   * Resolves once every replica's link to the primary is up, the primary counts them all online,
   * and the first Sentinel lists them all as healthy replicas: the next failover has candidates.
   */
  settled(deadlineMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface SentinelTopologyOptions {
  /** Sentinel's `down-after-milliseconds` (default 1000). */
  downAfterMs?: number;
  /** Told of every process started (data nodes, Sentinels, revived nodes), e.g. to kill them all. */
  onSpawn?: (child: ChildProcess) => void;
}

// Diskless sync without its default 5 s delay: a replica attaches at once.
const NODE_ARGS = ["--repl-diskless-sync-delay", "0"];

/**
 * A one-command connection to a node or Sentinel. A node killed meanwhile (a failover) fails the
 * command, which the caller handles; the socket error itself needs a listener or ioredis prints it.
 */
export function probe(port: number): Redis {
  const client = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on("error", () => undefined);
  return client;
}

export async function sentinelCommand(
  port: number,
  ...args: (string | number)[]
): Promise<unknown> {
  const client = probe(port);
  try {
    await client.connect();
    return await client.call("SENTINEL", ...args);
  } finally {
    client.disconnect();
  }
}

export async function role(port: number): Promise<string> {
  const client = probe(port);
  try {
    await client.connect();
    const info = await client.info("replication");
    const up = /master_link_status:up/u.test(info);
    return /role:master/u.test(info) ? "master" : up ? "replica-up" : "replica-down";
  } finally {
    client.disconnect();
  }
}

async function onlineReplicas(port: number): Promise<number> {
  const client = probe(port);
  try {
    await client.connect();
    return (await client.info("replication")).match(/state=online/gu)?.length ?? 0;
  } finally {
    client.disconnect();
  }
}

/** The last lines of each Sentinel's log: why an election stalled, in Sentinel's own words. */
async function sentinelLogTails(dirs: string[], lines = 40): Promise<string> {
  const tails = await Promise.all(
    dirs.map(async (dir) => {
      const log = await readFile(join(dir, "sentinel.log"), "utf8").catch(() => "");
      return `--- ${dir}\n${log.split("\n").slice(-lines).join("\n")}`;
    }),
  );
  return tails.join("\n");
}

async function startSentinel(
  primaryPort: number,
  dirs: string[],
  downAfterMs: number,
): Promise<ChildProcess & { port: number }> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), `tether-sentinel-${port}-`));
  dirs.push(dir);
  const conf = join(dir, "sentinel.conf");
  await writeFile(
    conf,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      "protected-mode no",
      `dir ${dir}`,
      // Kept for a promotion that never comes: its error quotes the end of each log.
      `logfile ${join(dir, "sentinel.log")}`,
      `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${SENTINEL_MASTER} ${downAfterMs}`,
      `sentinel failover-timeout ${SENTINEL_MASTER} 5000`,
      `sentinel parallel-syncs ${SENTINEL_MASTER} 2`,
      "",
    ].join("\n"),
  );
  const child = spawn("redis-sentinel", [conf], { stdio: "ignore" });
  await waitForPing(port);
  return Object.assign(child, { port });
}

export async function startSentinelTopology(
  replicas = 2,
  options: SentinelTopologyOptions = {},
): Promise<SentinelTopology> {
  const spawned = (child: ChildProcess) => options.onSpawn?.(child);
  // Data nodes are killed and revived on their ports: ports no other process is handed meanwhile.
  const primary = await startRedis(NODE_ARGS, await stablePort());
  spawned(primary.child);
  const nodes = [primary];
  for (let i = 0; i < replicas; i++) {
    nodes.push(
      await startRedis(
        [...NODE_ARGS, "--replicaof", "127.0.0.1", String(primary.port)],
        await stablePort(),
      ),
    );
    spawned((nodes.at(-1) as RedisProcess).child);
  }
  await waitFor(
    async () => {
      const roles = await Promise.all(nodes.slice(1).map((n) => role(n.port)));
      return roles.every((r) => r === "replica-up");
    },
    { timeoutMs: 20_000, intervalMs: 50, what: "the replicas to attach" },
  );
  const dirs: string[] = [];
  const sentinels: (ChildProcess & { port: number })[] = [];
  for (let i = 0; i < 3; i++) {
    sentinels.push(await startSentinel(primary.port, dirs, options.downAfterMs ?? 1_000));
    spawned(sentinels[i] as ChildProcess);
  }
  // Sentinels learn the replicas from the primary's INFO and each other by hello messages.
  await waitFor(
    async () => {
      const known = await Promise.all(
        sentinels.map(async (s) => [
          ((await sentinelCommand(s.port, "REPLICAS", SENTINEL_MASTER)) as unknown[]).length,
          ((await sentinelCommand(s.port, "SENTINELS", SENTINEL_MASTER)) as unknown[]).length,
        ]),
      );
      return known.every(([r, o]) => r === replicas && o === 2);
    },
    { timeoutMs: 30_000, intervalMs: 100, what: "the sentinels to know the topology" },
  );

  const primaryPort = async (): Promise<number> => {
    const first = sentinels[0] as { port: number };
    const addr = (await sentinelCommand(
      first.port,
      "GET-MASTER-ADDR-BY-NAME",
      SENTINEL_MASTER,
    )) as [string, string];
    return Number(addr[1]);
  };
  return {
    masterName: SENTINEL_MASTER,
    sentinels: sentinels.map((s) => ({ host: "127.0.0.1", port: s.port })),
    nodes,
    primaryPort,
    async failover() {
      const before = await primaryPort();
      await sentinelCommand((sentinels[0] as { port: number }).port, "FAILOVER", SENTINEL_MASTER);
      return promotedAfter(before);
    },
    async killPrimary(killOptions = {}) {
      const before = await primaryPort();
      const victim = nodes.find((n) => n.port === before);
      if (!victim) throw new Error(`no Redis node on ${before}`);
      const lagging = killOptions.replicasStoppedMs ? nodes.filter((n) => n !== victim) : [];
      for (const n of lagging) n.child.kill("SIGSTOP");
      try {
        if (lagging.length > 0) await sleep(killOptions.replicasStoppedMs ?? 0);
        // Bounded, and not waited for when it has exited already: an exit that passed would
        // never come, and the replicas would stay stopped.
        if (victim.child.exitCode === null && victim.child.signalCode === null) {
          const exited = new Promise((r) => victim.child.once("exit", r));
          victim.child.kill("SIGKILL");
          await Promise.race([exited, sleep(10_000)]);
        }
      } finally {
        for (const n of lagging) n.child.kill("SIGCONT");
      }
      return promotedAfter(before, killOptions.promotionWaitMs);
    },
    isDown(port) {
      const found = nodes.find((n) => n.port === port);
      return !found || found.child.exitCode !== null || found.child.signalCode !== null;
    },
    sentinelLogs: () => sentinelLogTails(dirs, Number.MAX_SAFE_INTEGER),
    async revive(port, primaryGiven) {
      const index = nodes.findIndex((n) => n.port === port);
      const old = nodes[index];
      if (!old || old.child.signalCode === null) throw new Error(`node ${port} was not killed`);
      const primary = primaryGiven ?? (await primaryPort());
      const child = spawn(
        "redis-server",
        [
          ...["--port", String(port), "--bind", "127.0.0.1", "--dir", old.dir, "--save", ""],
          ...["--appendonly", "no", "--protected-mode", "no", ...NODE_ARGS],
          ...["--replicaof", "127.0.0.1", String(primary)],
        ],
        { stdio: "ignore" },
      );
      spawned(child);
      await waitForPing(port);
      const pid = await redisPid(port);
      if (pid !== child.pid) {
        throw new Error(`port ${port} answered by process ${pid}, not redis-server ${child.pid}`);
      }
      nodes[index] = {
        port,
        child,
        dir: old.dir,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise((r) => child.once("exit", r));
            child.kill("SIGTERM");
            await exited;
          }
          await rm(old.dir, { recursive: true, force: true });
        },
      };
    },
    node(port) {
      const found = nodes.find((n) => n.port === port);
      if (!found) throw new Error(`no Redis node on ${port}`);
      return found;
    },
    async settled(deadlineMs = 30_000) {
      const first = sentinels[0] as { port: number };
      await quotingLogs(
        waitFor(
          async () => {
            const primary = await primaryPort();
            const others = nodes.filter((n) => n.port !== primary);
            const roles = await Promise.all(others.map((n) => role(n.port).catch(() => "")));
            if (!roles.every((r) => r === "replica-up")) return false;
            if ((await onlineReplicas(primary)) < others.length) return false;
            const known = (await sentinelCommand(
              first.port,
              "REPLICAS",
              SENTINEL_MASTER,
            )) as string[][];
            const healthy = known.filter(
              (fields) => fields[fields.indexOf("flags") + 1] === "slave",
            );
            return healthy.length >= others.length;
          },
          { timeoutMs: deadlineMs, intervalMs: 50, what: "the replicas to be in sync and known" },
        ),
      );
    },
    async stop() {
      for (const s of sentinels) {
        if (s.exitCode !== null || s.signalCode !== null) continue;
        const exited = new Promise((r) => s.once("exit", r));
        s.kill("SIGTERM");
        await exited;
      }
      for (const n of nodes) {
        // A node killed by a test has exited already; stop() would wait for an exit that passed.
        if (n.child.signalCode !== null) await rm(n.dir, { recursive: true, force: true });
        else await n.stop();
      }
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
  };

  async function promotedAfter(before: number, timeoutMs = 90_000): Promise<number> {
    let after = before;
    await quotingLogs(
      waitFor(
        async () => {
          after = await primaryPort().catch(() => before);
          return after !== before && (await role(after).catch(() => "")) === "master";
        },
        // Generous: an election split among the three Sentinels aborts the attempt, and the next
        // comes only after twice the failover-timeout (5 s here), so a few splits in a row on a
        // loaded machine take tens of seconds; giving up early leaves the topology with no primary.
        { timeoutMs, intervalMs: 50, what: "Sentinel to promote a replica" },
      ),
    );
    return after;
  }

  /** A wait on Sentinel that times out fails with the end of each Sentinel's log. */
  async function quotingLogs(wait: Promise<unknown>): Promise<void> {
    try {
      await wait;
    } catch (error) {
      throw new Error(`${String(error)}\n${await sentinelLogTails(dirs)}`, { cause: error });
    }
  }
}
