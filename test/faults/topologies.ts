// The Redis topologies the fault suite runs Tether on, behind one shape: a standalone server
// (AOF, restarts); a three-master Cluster, without replicas (restarts) or with one replica per
// master (restarts and failovers); and one primary with two replicas under three Sentinels
// (failovers). A failover SIGKILLs a primary, waits until a replica is promoted, starts the
// killed node again as a replica of the new primary and waits until every replica is in sync,
// so the next failover has candidates that hold every acknowledged write (ADR 0017: with
// TETHER_REDIS_MIN_REPLICAS equal to the replicas per primary, one failover at a time loses
// nothing acknowledged). Redis faults on one topology never overlap.
import { execFile, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { Cluster, Redis } from "ioredis";
import { waitForClusterOk } from "../support/redis-harness.js";
import { startSentinelTopology } from "../support/sentinel-topology.js";
import { track } from "./processes.js";
import { describeDiagnosis, type UnpromotableDiagnosis } from "./sentinel-diagnosis.js";
import { healSentinel, type HealReport } from "./sentinel-heal.js";
import {
  startRestartableCluster,
  startStandalone,
  type RestartableRedis,
} from "./redis-servers.js";
import { sleep, waitFor } from "../support/wait-for.js";

const run = promisify(execFile);

export type TopologyName = "standalone" | "cluster" | "sentinel";
export type Durability = "async" | "replicated";
type Pick = <T>(items: T[]) => T;

export interface FaultTopology {
  readonly name: TopologyName;
  /** Every Redis port a Tether replica may connect to: data nodes and Sentinels. */
  readonly ports: number[];
  /** TETHER_REDIS_* for the Tether replicas, durability included. */
  readonly env: Record<string, string>;
  readonly durability: Durability;
  /** The single server, for the long outage probe. */
  readonly standalone?: RestartableRedis;
  /** A direct connection (no proxy) for the audit and the probes. */
  connect(): Redis | Cluster;
  /** redis_restart: one node stopped (SIGKILL or SIGTERM) for `downMs`; resolves once healthy. */
  restartNode?(pick: Pick, signal: "SIGKILL" | "SIGTERM", downMs: number): Promise<void>;
  /**
   * primary_failover; resolves with the old and new primary's ports once all is in sync. With
   * `lagMs`, the primary's replicas are stopped that long before it is killed (continued right
   * after): what it accepted meanwhile reached no replica, as with a replication link that lags.
   */
  failover?(pick: Pick, lagMs?: number): Promise<{ from: number; to: number }>;
  /**
   * Before the verification: every node the faults stopped started again, a primary (per shard)
   * with its replicas in sync; bounded, and reported (time, nodes restarted, any diagnosis).
   */
  heal(): Promise<HealReport>;
  /** Findings about the environment made during the run (a Sentinel with no good replica). */
  readonly findings: UnpromotableDiagnosis[];
  stop(): Promise<void>;
}

/** How long a heal may take in all, and how long Sentinel gets to promote on its own first. */
export const HEAL_DEADLINE_MS = 120_000;
export const PROMOTION_WAIT_MS = 30_000;

async function info(port: number): Promise<string> {
  return run("redis-cli", ["-p", String(port), "info", "replication"], { timeout: 5_000 }).then(
    (r) => r.stdout,
    () => "",
  );
}

export async function startStandaloneTopology(): Promise<FaultTopology> {
  const server = await startStandalone();
  return {
    name: "standalone",
    ports: [server.port],
    env: { TETHER_REDIS_URL: `redis://127.0.0.1:${server.port}` },
    durability: "async",
    standalone: server,
    connect: () => new Redis(`redis://127.0.0.1:${server.port}`),
    restartNode: (_pick, signal, downMs) => server.restart(signal, downMs),
    findings: [],
    async heal() {
      const started = Date.now();
      const restarted = server.isRunning() ? [] : [server.port];
      if (!server.isRunning()) await server.start();
      return { ms: Date.now() - started, restarted, primary: server.port };
    },
    stop: () => server.stop(),
  };
}

interface ClusterNode {
  id: string;
  port: number;
  master: boolean;
  masterId: string;
}

async function clusterView(ports: number[]): Promise<ClusterNode[]> {
  for (const port of ports) {
    const out = await run("redis-cli", ["-p", String(port), "cluster", "nodes"], {
      timeout: 5_000,
    }).then(
      (r) => r.stdout,
      () => "",
    );
    if (out === "") continue;
    return out
      .trim()
      .split("\n")
      .map((line) => line.split(" "))
      .filter((f) => !(f[2] ?? "").includes("fail"))
      .map((f) => ({
        id: f[0] ?? "",
        port: Number((f[1] ?? "").split(/[:@]/u)[1]),
        master: (f[2] ?? "").includes("master"),
        masterId: f[3] ?? "-",
      }));
  }
  throw new Error("no cluster node answered CLUSTER NODES");
}

/** A cluster with `replicasPerMaster` replicas per master, `replicated` when it has replicas. */
export async function startClusterTopology(
  replicasPerMaster: number,
  durability: Durability,
): Promise<FaultTopology> {
  const cluster = await startRestartableCluster(3, replicasPerMaster);
  const ports = cluster.nodes.map((n) => n.port);
  const node = (port: number) => cluster.nodes.find((n) => n.port === port) as RestartableRedis;
  // Healthy: state ok everywhere, every master with its replicas online, every replica linked.
  const settled = async (): Promise<void> => {
    await waitForClusterOk(ports, 30_000);
    await waitFor(
      async () => {
        const states = await Promise.all(ports.map(info));
        return states.every((s) =>
          s.includes("role:master")
            ? (s.match(/state=online/gu)?.length ?? 0) >= replicasPerMaster
            : s.includes("master_link_status:up"),
        );
      },
      { what: "every master's replicas online", timeoutMs: 30_000, intervalMs: 50 },
    );
  };
  return {
    name: "cluster",
    ports,
    env: {
      TETHER_REDIS_CLUSTER_NODES: ports.map((p) => `127.0.0.1:${p}`).join(","),
      ...durabilityEnv(durability, replicasPerMaster),
    },
    durability,
    connect: () => new Cluster(ports.map((port) => ({ host: "127.0.0.1", port }))),
    findings: [],
    async heal() {
      // A failover that timed out before it started its victim again leaves that node down.
      const started = Date.now();
      const restarted = cluster.nodes.filter((n) => !n.isRunning()).map((n) => n.port);
      for (const port of restarted) await node(port).start();
      await settled();
      return { ms: Date.now() - started, restarted, primary: 0 };
    },
    async restartNode(pick, signal, downMs) {
      await node(pick(ports)).restart(signal, downMs);
      await settled();
    },
    ...(replicasPerMaster > 0 && {
      async failover(pick: Pick, lagMs = 0) {
        const view = await clusterView(ports);
        const masters = view.filter((n) => n.master && view.some((r) => r.masterId === n.id));
        const victim = pick(masters);
        const candidates = view.filter((r) => r.masterId === victim.id).map((r) => r.port);
        const lagging = lagMs > 0 ? candidates.map(node) : [];
        for (const replica of lagging) replica.pause();
        try {
          if (lagging.length > 0) await sleep(lagMs);
          await node(victim.port).halt("SIGKILL");
        } finally {
          for (const replica of lagging) replica.resume();
        }
        let promoted = 0;
        await waitFor(
          async () => {
            const roles = await Promise.all(candidates.map(info));
            promoted = candidates[roles.findIndex((s) => s.includes("role:master"))] ?? 0;
            return promoted !== 0;
          },
          { what: "a replica promoted", timeoutMs: 30_000, intervalMs: 50 },
        );
        await waitForClusterOk(
          ports.filter((p) => p !== victim.port),
          30_000,
        );
        // Back with its old nodes.conf: the cluster has moved on (a newer config epoch), so it
        // rejoins as a replica of the promoted node; until then Redis keeps a rebooted master
        // unwritable for a moment, and it has no replica to confirm a WAIT.
        await node(victim.port).start();
        await settled();
        return { from: victim.port, to: promoted };
      },
    }),
    stop: () => cluster.stop(),
  };
}

function durabilityEnv(durability: Durability, replicas: number): Record<string, string> {
  return durability === "replicated"
    ? { TETHER_REDIS_DURABILITY: "replicated", TETHER_REDIS_MIN_REPLICAS: String(replicas) }
    : { TETHER_REDIS_DURABILITY: "async" };
}

/** Sentinel's down-after-milliseconds in the fault suite: failovers start half a second in. */
const DOWN_AFTER_MS = 500;

/** One primary, two replicas, three Sentinels (test/support/sentinel-topology.ts). */
export async function startSentinelFaultTopology(durability: Durability): Promise<FaultTopology> {
  const topology = await startSentinelTopology(2, {
    downAfterMs: DOWN_AFTER_MS,
    onSpawn: (child: ChildProcess) => void track(child),
  });
  const dataPorts = topology.nodes.map((n) => n.port);
  const sentinels = topology.sentinels;
  const findings: UnpromotableDiagnosis[] = [];
  const heal = async (promotionWaitMs: number): Promise<HealReport> => {
    const report = await healSentinel(topology, {
      downAfterMs: DOWN_AFTER_MS,
      promotionWaitMs,
      deadlineMs: HEAL_DEADLINE_MS,
    });
    if (report.diagnosis) {
      findings.push(report.diagnosis);
      process.stdout.write(`[sentinel] finding: ${describeDiagnosis(report.diagnosis)}\n`);
    }
    return report;
  };
  return {
    name: "sentinel",
    ports: [...dataPorts, ...sentinels.map((s) => s.port)],
    env: {
      TETHER_REDIS_SENTINELS: sentinels.map((s) => `${s.host}:${s.port}`).join(","),
      TETHER_REDIS_SENTINEL_MASTER: topology.masterName,
      ...durabilityEnv(durability, 2),
    },
    durability,
    connect: () => new Redis({ sentinels, name: topology.masterName, role: "master" }),
    findings,
    heal: () => heal(PROMOTION_WAIT_MS),
    async failover(_pick, lagMs = 0) {
      const from = await topology.primaryPort();
      try {
        const to = await topology.killPrimary({
          replicasStoppedMs: lagMs,
          promotionWaitMs: PROMOTION_WAIT_MS,
        });
        await topology.revive(from);
        await topology.settled();
        return { from, to };
      } catch {
        // Sentinel promoted no one in time (or the topology did not settle): heal it now, with
        // the diagnosis, rather than leave the rest of the run without a primary.
        const healed = await heal(0);
        return { from, to: healed.primary };
      }
    },
    stop: () => topology.stop(),
  };
}
