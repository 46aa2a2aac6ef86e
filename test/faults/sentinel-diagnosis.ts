// Why Sentinel found no replica to promote, in its own terms. Sentinel (sentinel.c,
// sentinelSelectSlave) passes over a replica that is subjectively or objectively down or
// disconnected, whose last PING answer is older than 5 s, whose INFO is older than 5 s while the
// primary is down, whose link to the primary has been down longer than the primary's own down
// time plus ten `down-after-milliseconds`, or whose priority is 0; with none left it logs
// `-failover-abort-no-good-slave` and tries again after twice the failover timeout. On a loaded
// machine every Redis and Sentinel process starves at once and replicas can fail these checks
// for tens of seconds. That is a finding about the environment the suite ran in, not a violation
// by Tether: the harness reports it with the Sentinel's view, heals the topology, and verifies.

/** One replica as `SENTINEL REPLICAS` lists it: field names and values, alternating. */
export type SentinelFields = Record<string, string>;

export interface ReplicaVerdict {
  address: string;
  flags: string;
  /** Why Sentinel would pass over it (empty: it looks promotable now). */
  excluded_because: string[];
}

export interface UnpromotableDiagnosis {
  kind: "no_promotable_replica";
  /** `-failover-abort-no-good-slave` lines in the Sentinels' logs. */
  no_good_slave_aborts: number;
  /** The primary as the first Sentinel sees it (flags, failover state, down time). */
  primary: { address: string; flags: string; s_down_ms: number | undefined };
  replicas: ReplicaVerdict[];
  /** What the harness did about it. */
  healed_by: string;
}

const PING_VALIDITY_MS = 5_000;
const INFO_VALIDITY_MS = 5_000;

/** `SENTINEL REPLICAS` / `SENTINEL MASTER` replies (flat field/value arrays) as records. */
export function fieldsOf(reply: unknown): SentinelFields {
  const flat = Array.isArray(reply) ? (reply as unknown[]).map(String) : [];
  const fields: SentinelFields = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
  return fields;
}

const num = (value: string | undefined): number | undefined =>
  value === undefined || value === "" || Number.isNaN(Number(value)) ? undefined : Number(value);

/** Sentinel's exclusion rules applied to one replica, given the primary's down time. */
export function exclusions(
  replica: SentinelFields,
  downAfterMs: number,
  primarySdownMs: number | undefined,
): string[] {
  const reasons: string[] = [];
  const flags = (replica.flags ?? "").split(",");
  for (const flag of ["s_down", "o_down", "disconnected"]) {
    if (flags.includes(flag)) reasons.push(`flagged ${flag}`);
  }
  const lastOk = num(replica["last-ok-ping-reply"]);
  if (lastOk !== undefined && lastOk > PING_VALIDITY_MS) {
    reasons.push(`last PING answer ${lastOk} ms ago (> ${PING_VALIDITY_MS})`);
  }
  const info = num(replica["info-refresh"]);
  if (info !== undefined && info > INFO_VALIDITY_MS) {
    reasons.push(`INFO ${info} ms old (> ${INFO_VALIDITY_MS})`);
  }
  const linkDown = num(replica["master-link-down-time"]);
  if (linkDown !== undefined && linkDown > 0 && primarySdownMs !== undefined) {
    const allowed = primarySdownMs + 10 * downAfterMs;
    if (linkDown > allowed) {
      reasons.push(`link to the primary down ${linkDown} ms (> ${allowed} allowed)`);
    }
  }
  if (replica["slave-priority"] === "0") reasons.push("priority 0");
  return reasons;
}

export function countNoGoodSlave(logs: string): number {
  return logs.match(/-failover-abort-no-good-slave/gu)?.length ?? 0;
}

/** The diagnosis from the first Sentinel's view of the primary and its replicas, and the logs. */
export function diagnoseUnpromotable(view: {
  primary: SentinelFields;
  replicas: SentinelFields[];
  logs: string;
  downAfterMs: number;
  healedBy: string;
}): UnpromotableDiagnosis {
  const sdown = num(view.primary["s-down-time"]);
  return {
    kind: "no_promotable_replica",
    no_good_slave_aborts: countNoGoodSlave(view.logs),
    primary: {
      address: `${view.primary.ip ?? "?"}:${view.primary.port ?? "?"}`,
      flags: view.primary.flags ?? "",
      s_down_ms: sdown,
    },
    replicas: view.replicas.map((r) => ({
      address: `${r.ip ?? "?"}:${r.port ?? "?"}`,
      flags: r.flags ?? "",
      excluded_because: exclusions(r, view.downAfterMs, sdown),
    })),
    healed_by: view.healedBy,
  };
}

/** One line for the run's log and the verdict's findings. */
export function describeDiagnosis(d: UnpromotableDiagnosis): string {
  const replicas = d.replicas
    .map(
      (r) =>
        `${r.address} [${r.flags}] ${r.excluded_because.length > 0 ? r.excluded_because.join("; ") : "no exclusion seen now"}`,
    )
    .join(" | ");
  return (
    `no promotable replica (${d.no_good_slave_aborts} no-good-slave aborts; primary ` +
    `${d.primary.address} [${d.primary.flags}]): ${replicas}; healed by ${d.healed_by}`
  );
}
