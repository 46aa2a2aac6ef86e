// At start, reads what each Redis primary enforces on its own and warns where ADR 0022's argument
// needs more than the deployment has: a primary with replicas but no min-replicas-to-write keeps
// taking writes while cut off from them, and replicated durability that waits for fewer
// replicas than there are may be failed over to one that missed an acknowledged write. Advice
// only: managed Redis often refuses CONFIG, and the operator may have reasons.
import type { Cluster, Redis } from "ioredis";
import type { RedisDurability } from "../store/redis/durability.js";
import type { Logger } from "./logger.js";

export interface PrimaryReplicationFacts {
  node: string;
  /** Redis's `min-replicas-to-write`; undefined when CONFIG GET is refused. */
  minReplicasToWrite: number | undefined;
  /** Redis's `min-replicas-max-lag` in seconds; undefined when CONFIG GET is refused. */
  minReplicasMaxLagS: number | undefined;
  /** Replicas attached now (INFO replication `connected_slaves`). */
  connectedReplicas: number;
}

/** One warning per finding, each naming the node, the setting and what goes wrong without it. */
export function replicationAdvice(
  facts: PrimaryReplicationFacts,
  durability: RedisDurability,
): string[] {
  const advice: string[] = [];
  const { node, connectedReplicas } = facts;
  if (connectedReplicas > 0 && facts.minReplicasToWrite === 0) {
    advice.push(
      `${node} has ${connectedReplicas} replica(s) and min-replicas-to-write 0: cut off from ` +
        "them in a partition, it keeps taking lease renewals and commits a failover will discard; " +
        "set min-replicas-to-write to at least 1, with min-replicas-max-lag below Sentinel's " +
        "down-after-milliseconds (ADR 0022)",
    );
  }
  if (durability.mode === "replicated" && durability.minReplicas < connectedReplicas) {
    advice.push(
      `${node} has ${connectedReplicas} replicas and TETHER_REDIS_MIN_REPLICAS is ` +
        `${durability.minReplicas}: a failover may promote a replica that missed an ` +
        "acknowledged write, and an old primary that keeps one replica in a partition still " +
        "confirms writes; set it to the number of replicas (ADR 0022)",
    );
  }
  if (durability.mode === "replicated" && durability.minReplicas > connectedReplicas) {
    advice.push(
      `${node} has ${connectedReplicas} replica(s) attached and TETHER_REDIS_MIN_REPLICAS is ` +
        `${durability.minReplicas}: every acknowledging call fails UNAVAILABLE until enough attach`,
    );
  }
  return advice;
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, "mu").exec(info)?.[1]?.trim();
}

async function configNumber(node: Redis, name: string): Promise<number | undefined> {
  try {
    const reply = (await node.config("GET", name)) as unknown;
    const value = Array.isArray(reply) ? Number(reply[1]) : Number.NaN;
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `label` names the node in the advice (a Sentinel connection does not know its address). */
export async function readReplicationFacts(
  node: Redis,
  label: string,
): Promise<PrimaryReplicationFacts> {
  const info = await node.info("replication");
  return {
    node: label,
    minReplicasToWrite: await configNumber(node, "min-replicas-to-write"),
    minReplicasMaxLagS: await configNumber(node, "min-replicas-max-lag"),
    connectedReplicas: Number(infoField(info, "connected_slaves") ?? "0"),
  };
}

/** Logs the advice for every primary; never throws (a start must not wait on advice). */
export async function adviseOnReplication(
  redis: Redis | Cluster,
  durability: RedisDurability,
  logger: Logger,
): Promise<void> {
  try {
    const primaries = redis.isCluster
      ? (redis as Cluster)
          .nodes("master")
          .map((node) => [node, `${node.options.host}:${node.options.port}`] as const)
      : [[redis as Redis, "the Redis primary"] as const];
    for (const [node, label] of primaries) {
      const facts = await readReplicationFacts(node, label);
      logger.info({ ...facts, durability: durability.mode }, "Redis replication settings");
      for (const advice of replicationAdvice(facts, durability))
        logger.warn({ node: facts.node }, advice);
    }
  } catch (error) {
    logger.info({ err: error }, "could not read the Redis replication settings");
  }
}
