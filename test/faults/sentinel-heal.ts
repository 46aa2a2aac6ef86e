// Healing the Sentinel topology after faults the harness injected: a primary that Sentinel names
// and that answers as one, every killed node back as its replica, all in sync and known to
// Sentinel. When Sentinel finds no replica to promote within the wait (a loaded machine starves
// every Redis and Sentinel process at once, see sentinel-diagnosis.ts), the harness records why,
// in Sentinel's terms, and promotes by hand the live replica with the largest replication offset
// (in `replicated` durability every acknowledged write reached every replica, so that one holds
// them all), then points the other nodes and every Sentinel at it.
import type { SentinelTopology } from "../support/sentinel-topology.js";
import { probe, role, sentinelCommand } from "../support/sentinel-topology.js";
import { waitFor } from "../support/wait-for.js";
import {
  diagnoseUnpromotable,
  fieldsOf,
  type UnpromotableDiagnosis,
} from "./sentinel-diagnosis.js";

export interface HealReport {
  /** From the start of the heal to a primary with every replica in sync and known. */
  ms: number;
  /** Nodes (ports) the heal started again. */
  restarted: number[];
  primary: number;
  /** Set when Sentinel had no promotable replica and the harness promoted one by hand. */
  diagnosis?: UnpromotableDiagnosis;
}

async function replicationOffset(port: number): Promise<number> {
  const client = probe(port);
  try {
    await client.connect();
    const info = await client.info("replication");
    const offset = /(?:slave_repl_offset|master_repl_offset):(\d+)/u.exec(info);
    return Number(offset?.[1] ?? -1);
  } finally {
    client.disconnect();
  }
}

async function nodeCommand(port: number, ...args: string[]): Promise<unknown> {
  const client = probe(port);
  try {
    await client.connect();
    return await client.call(args[0] as string, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/** A primary Sentinel names, alive and answering as a master; 0 when there is none. */
async function livePrimary(topology: SentinelTopology): Promise<number> {
  const port = await topology.primaryPort().catch(() => 0);
  if (port === 0 || topology.isDown(port)) return 0;
  return (await role(port).catch(() => "")) === "master" ? port : 0;
}

/** The first Sentinel's view of the primary and its replicas, with every Sentinel's log. */
async function sentinelView(topology: SentinelTopology, downAfterMs: number, healedBy: string) {
  const first = topology.sentinels[0]?.port ?? 0;
  const primary = fieldsOf(
    await sentinelCommand(first, "MASTER", topology.masterName).catch(() => []),
  );
  const replicas = (
    (await sentinelCommand(first, "REPLICAS", topology.masterName).catch(() => [])) as unknown[]
  ).map(fieldsOf);
  const logs = await topology.sentinelLogs();
  return diagnoseUnpromotable({ primary, replicas, logs, downAfterMs, healedBy });
}

/** REPLICAOF NO ONE on the best live replica; the others and every Sentinel follow it. */
async function promoteByHand(topology: SentinelTopology, downAfterMs: number): Promise<number> {
  const live = topology.nodes.map((n) => n.port).filter((p) => !topology.isDown(p));
  const offsets = await Promise.all(live.map((p) => replicationOffset(p).catch(() => -1)));
  const best = live[offsets.indexOf(Math.max(...offsets))];
  if (best === undefined) throw new Error("no live Redis node to promote");
  await nodeCommand(best, "REPLICAOF", "NO", "ONE");
  for (const port of live.filter((p) => p !== best)) {
    await nodeCommand(port, "REPLICAOF", "127.0.0.1", String(best));
  }
  for (const { port } of topology.sentinels) {
    const name = topology.masterName;
    await sentinelCommand(port, "REMOVE", name).catch(() => undefined);
    await sentinelCommand(port, "MONITOR", name, "127.0.0.1", best, 2);
    await sentinelCommand(port, "SET", name, "down-after-milliseconds", downAfterMs);
    await sentinelCommand(port, "SET", name, "failover-timeout", 5_000);
    await sentinelCommand(port, "SET", name, "parallel-syncs", 2);
  }
  return best;
}

/**
 * Heals within `deadlineMs`: waits up to `promotionWaitMs` for Sentinel's own primary, promotes
 * by hand (diagnosed) if none comes, revives killed nodes, waits for sync. Throws past the
 * deadline: a topology the harness cannot heal leaves nothing to verify against.
 */
export async function healSentinel(
  topology: SentinelTopology,
  options: { downAfterMs: number; promotionWaitMs: number; deadlineMs: number },
): Promise<HealReport> {
  const started = Date.now();
  // No primary of Sentinel's own by then is diagnosed below, not thrown.
  let primary = await waitFor(() => livePrimary(topology), {
    what: "Sentinel's own primary",
    timeoutMs: options.promotionWaitMs,
    intervalMs: 100,
  }).catch(() => 0);
  let diagnosis: UnpromotableDiagnosis | undefined;
  if (primary === 0) {
    diagnosis = await sentinelView(topology, options.downAfterMs, "");
    primary = await promoteByHand(topology, options.downAfterMs);
    diagnosis.healed_by = `the harness promoting 127.0.0.1:${primary} (largest offset) by hand`;
    await waitFor(async () => (await livePrimary(topology)) === primary, {
      timeoutMs: Math.max(1_000, options.deadlineMs - (Date.now() - started)),
      intervalMs: 100,
      what: `Sentinel to name ${primary} after the promotion by hand`,
    });
  }
  const restarted: number[] = [];
  for (const node of [...topology.nodes]) {
    if (!topology.isDown(node.port)) continue;
    await topology.revive(node.port, primary);
    restarted.push(node.port);
  }
  await topology.settled(Math.max(1_000, options.deadlineMs - (Date.now() - started)));
  return { ms: Date.now() - started, restarted, primary, ...(diagnosis && { diagnosis }) };
}
