// Redis commands and round trips per turn of one configuration: a server whose Redis connection
// goes through the counting proxy (counts.ts's naming proxy), on a redis-server of its own, runs
// idle turns one at a time and then turns on many sessions at once. With webhooks on, each
// interval lasts until the receiver has every delivery of its turns, so the deliverer's claim,
// endpoint read and settle are counted with the turns they deliver.
import { startRedis } from "../../test/support/redis-harness.js";
import type { WebhookReceiver } from "../../test/support/webhook-receiver.js";
import { countsBetween, type ProxyCounts } from "../support/redis-proxy.js";
import { startNamingProxy } from "./counts.js";
import { startTether } from "./server.js";
import { concurrentTurns, runTurn, sequentialTurns, turnClient } from "./workloads.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const round = (x: number) => Number(x.toFixed(2));
/** As counts.ts: long enough for the lease's release, so the next turn starts idle. */
const IDLE_PAUSE_MS = 100;
/** How long to wait for a counted interval's deliveries before counting without them. */
const DELIVERY_WAIT_MS = 10_000;

export interface CountOptions {
  name: string;
  env: Record<string, string>;
  logDir: string;
  warmup: number;
  idleTurns: number;
  sessions: number;
  /** The receiver of this configuration's webhooks, when it delivers any. */
  receiver?: WebhookReceiver;
}

export interface PerTurn {
  commands: number;
  round_trips: number;
}

export interface ConfigCounts {
  idle: PerTurn;
  concurrent: PerTurn;
  /** Commands per idle turn by name (EVALSHA by script), largest first. */
  idle_by_name: Record<string, number>;
  /** Webhook deliveries the receiver verified, per counted turn (1 when every one arrived). */
  deliveries_per_turn?: number;
}

function perTurn(counts: ProxyCounts, turns: number): PerTurn {
  return {
    commands: round(counts.commands / turns),
    round_trips: round(counts.roundTrips / turns),
  };
}

async function untilDelivered(receiver: WebhookReceiver | undefined, total: number) {
  if (!receiver) return;
  const deadline = Date.now() + DELIVERY_WAIT_MS;
  while (new Set(receiver.delivered.map((d) => d.id)).size < total && Date.now() < deadline) {
    await sleep(20);
  }
}

export async function countConfig(options: CountOptions): Promise<ConfigCounts> {
  const { receiver } = options;
  const redis = await startRedis();
  const proxy = await startNamingProxy(redis.port);
  const tether = await startTether(
    `count-${options.name}`,
    { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${proxy.port}`, ...options.env },
    options.logDir,
  );
  const delivered = () => new Set(receiver?.delivered.map((d) => d.id)).size;
  const base = delivered();
  let turns = 0;
  try {
    const client = turnClient(tether.address);
    await sequentialTurns(client, `count-${options.name}`, options.warmup);
    turns += options.warmup;
    await untilDelivered(receiver, base + turns);
    await sleep(IDLE_PAUSE_MS);

    const idleStart = proxy.snapshot();
    for (let n = 0; n < options.idleTurns; n++) {
      await runTurn(client, `count-${options.name}`, options.warmup + n);
      await sleep(IDLE_PAUSE_MS);
    }
    turns += options.idleTurns;
    await untilDelivered(receiver, base + turns);
    const idle = countsBetween(idleStart, proxy.snapshot());
    const idleDelivered = delivered() - base - options.warmup;

    // Sessions that exist already, as in steady state; then two counted turns each.
    await concurrentTurns(client, `count-${options.name}-c`, options.sessions, 1);
    turns += options.sessions;
    await untilDelivered(receiver, base + turns);
    const before = proxy.snapshot();
    const conc = await concurrentTurns(client, `count-${options.name}-c`, options.sessions, 2);
    turns += conc.turns;
    await untilDelivered(receiver, base + turns);
    const concurrent = countsBetween(before, proxy.snapshot());

    return {
      idle: perTurn(idle, options.idleTurns),
      concurrent: perTurn(concurrent, conc.turns),
      idle_by_name: Object.fromEntries(
        [...idle.byName]
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .map(([name, n]) => [name, round(n / options.idleTurns)]),
      ),
      ...(receiver && { deliveries_per_turn: round(idleDelivered / options.idleTurns) }),
    };
  } finally {
    await tether.stop();
    await proxy.close();
    await redis.stop();
  }
}
