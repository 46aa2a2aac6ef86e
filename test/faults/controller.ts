// The fault suite's controller: one fault per tick, the kind with the fewest so far first (a kind
// whose target is busy yields the tick to the next), until every kind of the run has its count
// or the run's time is up. Replica faults never take the last untouched replica (clients always
// have somewhere to go) and never two at once on one replica; Redis faults (restart, failover)
// never overlap. Each fault's steps run in the background; a failing step is recorded.
import type { PartitionProxies } from "./partition-proxy.js";
import type { Replica } from "./replicas.js";
import type { FaultTopology } from "./topologies.js";
import { sleep } from "../support/wait-for.js";

export const FAULT_KINDS = [
  "replica_kill",
  "replica_pause",
  "replica_restart",
  "redis_restart",
  "primary_failover",
  "partition",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ControllerOptions {
  kinds: readonly FaultKind[];
  /** Stop once every kind was injected this many times. */
  perKind: number;
  intervalMs: number;
  /** Stop injecting at this time whatever the counts. */
  untilMs: number;
  leaseTtlMs: number;
  /**
   * Every other primary_failover stops the primary's replicas for half to all of this before the
   * kill (0: none do), so the primary's last acknowledged-or-not writes reach no replica.
   */
  failoverLagMs: number;
  random: () => number;
  replicas: Replica[];
  topology: FaultTopology;
  proxies?: PartitionProxies;
}

export interface ControllerReport {
  faults: Record<FaultKind, number>;
  /** Connections a partition froze, over all partitions (each froze at least one). */
  partition_connections_frozen: number;
  /** Partitions that found the replica with no open Redis connection. */
  partitions_empty: number;
  /** From a primary's SIGKILL to the promoted replica accepting writes, killed node back in sync. */
  failover_ms: { min: number; max: number; mean: number };
  /** Failovers whose replicas were stopped before the kill (failoverLagMs). */
  failovers_lagged: number;
  failures: string[];
}

export async function runFaults(options: ControllerOptions): Promise<ControllerReport> {
  const { random, replicas, topology, proxies, leaseTtlMs } = options;
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
  const jitter = (low: number, high: number) => low + random() * (high - low);
  const faults = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  const report: ControllerReport = {
    faults,
    partition_connections_frozen: 0,
    partitions_empty: 0,
    failover_ms: { min: 0, max: 0, mean: 0 },
    failovers_lagged: 0,
    failures: [],
  };
  const failovers: number[] = [];
  const busy = new Set<string>();
  const pending: Promise<void>[] = [];
  const background = (step: () => Promise<void>, release: () => void) =>
    pending.push(
      step()
        .catch((error: unknown) => void report.failures.push(String(error)))
        .finally(release),
    );

  const redisFault = (kind: "redis_restart" | "primary_failover"): boolean => {
    if (busy.has("redis")) return false;
    if (kind === "redis_restart" && !topology.restartNode) return false;
    if (kind === "primary_failover" && !topology.failover) return false;
    busy.add("redis");
    const lagMs =
      kind === "primary_failover" && faults.primary_failover % 2 === 1
        ? jitter(0.5, 1) * options.failoverLagMs
        : 0;
    if (lagMs > 0) report.failovers_lagged++;
    const signal = faults.redis_restart % 2 === 0 ? "SIGKILL" : "SIGTERM";
    background(
      async () => {
        if (kind === "redis_restart") await topology.restartNode?.(pick, signal, jitter(200, 900));
        else {
          const started = Date.now();
          await topology.failover?.(pick, lagMs);
          failovers.push(Date.now() - started);
        }
        // A moment of calm after each, so turns progress between Redis faults.
        await sleep(jitter(200, 800));
      },
      () => busy.delete("redis"),
    );
    return true;
  };

  const replicaFault = (kind: FaultKind): boolean => {
    if (kind === "partition" && !proxies) return false;
    const free = replicas.filter((r) => !busy.has(r.ownerId) && r.isServing());
    if (free.length < 2) return false;
    const replica = pick(free);
    busy.add(replica.ownerId);
    const release = () => busy.delete(replica.ownerId);
    if (kind === "replica_kill") {
      background(async () => {
        await replica.kill();
        await sleep(jitter(200, 1_200));
        await replica.start();
      }, release);
    } else if (kind === "replica_pause") {
      replica.pause();
      background(async () => {
        // Past the lease TTL, so the paused holder's leases expire under it.
        await sleep(jitter(1.3, 2.2) * leaseTtlMs);
        replica.resume();
        await sleep(300);
      }, release);
    } else if (kind === "partition") {
      background(async () => {
        const frozen = (await proxies?.partition(replica.ownerId)) ?? 0;
        report.partition_connections_frozen += frozen;
        if (frozen === 0) report.partitions_empty++;
        // One to three lease TTLs: the replica's leases expire while its sockets stay open.
        await sleep(jitter(1, 3) * leaseTtlMs);
        await proxies?.heal(replica.ownerId);
        await sleep(300);
      }, release);
    } else {
      background(() => replica.restart(), release);
    }
    return true;
  };

  const inject = (kind: FaultKind): boolean =>
    kind === "redis_restart" || kind === "primary_failover" ? redisFault(kind) : replicaFault(kind);

  await sleep(1_000);
  const lacking = () => options.kinds.some((k) => faults[k] < options.perKind);
  for (let tick = 0; tick < 100_000 && lacking() && Date.now() < options.untilMs; tick++) {
    // Fewest first; ties in a rotating order so no kind always wins them.
    const order = options.kinds
      .map((kind, i) => ({
        kind,
        rank: faults[kind] * 1_000 + ((i + tick) % options.kinds.length),
      }))
      .sort((a, b) => a.rank - b.rank);
    for (const { kind } of order) {
      if (inject(kind)) {
        faults[kind]++;
        break;
      }
    }
    await sleep(options.intervalMs);
  }
  await Promise.all(pending);
  if (failovers.length > 0) {
    report.failover_ms = {
      min: Math.min(...failovers),
      max: Math.max(...failovers),
      mean: Math.round(failovers.reduce((a, b) => a + b, 0) / failovers.length),
    };
  }
  return report;
}
