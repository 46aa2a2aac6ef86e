// Counts the lease renewals of a replica that holds many leases at once: sessions whose turns wait
// for a client tool answer (so each holds its lease) on a server with a short lease TTL, through
// the counting proxy. A replica renews every lease it holds in one renewLeases call per third of
// the TTL (ADR 0011); a timer per lease would send one call per lease in that time.
import { countsBetween } from "../support/redis-proxy.js";
import { startNamingProxy } from "./counts.js";
import { startTether } from "./server.js";
import { heldToolTurn, turnClient } from "./workloads.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface RenewalCount {
  leases: number;
  lease_ttl_ms: number;
  seconds: number;
  /** renewLeases script calls in the interval. */
  renewal_calls: number;
  /** Calls a timer per lease would have sent: one per lease per third of the TTL. */
  calls_with_a_timer_per_lease: number;
}

export async function countRenewals(options: {
  redisPort: number;
  logDir: string;
  leases: number;
  holdMs: number;
  leaseTtlMs: number;
}): Promise<RenewalCount> {
  const { redisPort, logDir, leases, holdMs, leaseTtlMs } = options;
  const proxy = await startNamingProxy(redisPort);
  const tether = await startTether(
    "redis-renewals",
    {
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      TETHER_PROVIDER: "scripted-tools",
      TETHER_LEASE_TTL_MS: String(leaseTtlMs),
      // Waiting turns stay in memory (and hold their leases) for the whole interval.
      TETHER_PARK_AFTER_MS: String(holdMs * 10),
      TETHER_CLIENT_TOOL_TIMEOUT_MS: String(holdMs * 10),
    },
    logDir,
  );
  const client = turnClient(tether.address);
  try {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    let waiting = 0;
    let allWaiting: () => void = () => undefined;
    const everyoneWaits = new Promise<void>((r) => (allWaiting = r));
    const turns = Array.from({ length: leases }, (_, i) =>
      heldToolTurn(
        client,
        `renew-${i}`,
        () => {
          if (++waiting === leases) allWaiting();
        },
        released,
      ),
    );
    await everyoneWaits;
    const before = proxy.snapshot();
    const t0 = Date.now();
    await sleep(holdMs);
    const counts = countsBetween(before, proxy.snapshot());
    const seconds = (Date.now() - t0) / 1000;
    release();
    await Promise.all(turns);
    return {
      leases,
      lease_ttl_ms: leaseTtlMs,
      seconds: Number(seconds.toFixed(2)),
      renewal_calls: counts.byName.get("EVALSHA renewLeases") ?? 0,
      calls_with_a_timer_per_lease: Math.round((leases * seconds * 1000) / (leaseTtlMs / 3)),
    };
  } finally {
    await tether.stop();
    await proxy.close();
  }
}
