// Counts Redis commands, round trips and connections per turn: a server whose Redis connection
// goes through the counting proxy runs the turn benchmark's kinds of turns, one at a time. No
// timing here; the proxy stays out of the timed runs.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  countsBetween,
  startRedisProxy,
  type ProxyCounts,
  type RedisProxy,
} from "../support/redis-proxy.js";
import { scriptNamerFromDir } from "../support/resp.js";
import { startTether } from "./server.js";
import {
  concurrentTurns,
  enqueuedInputs,
  runTurn,
  sequentialTurns,
  toolTurn,
  turnClient,
} from "./workloads.js";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const round = (x: number) => Number(x.toFixed(2));
/** Long enough for the driver to release the lease after the turn: the next turn starts idle. */
const IDLE_PAUSE_MS = 100;
/** Turns counted on the long session. */
const LONG_COUNTED = 10;
/** Client tool turns counted, and as many again with a steer. */
const TOOL_COUNTED = 10;

export interface CountOptions {
  redisPort: number;
  logDir: string;
  /** Turns on the counted server before anything is counted. */
  warmup: number;
  /** Turns back to back on one session. */
  countTurns: number;
  /** Turns on an idle session, one at a time. */
  idleTurns: number;
  /** Sessions at once, two counted turns each. */
  sessions: number;
  /** Inputs submitted at once on one session. */
  enqueued: number;
  /** A session that already holds many committed turns, in the same Redis. */
  longSession: string;
  /** More settings of the counted server (TETHER_WEBHOOKS=false: the turn without webhooks). */
  env?: Record<string, string>;
  /** The built server to count (another tree's dist/server/main.js: a before/after run). */
  entry?: string;
}

/**
 * A counting proxy in front of the redis-server, its script cache emptied first: the servers
 * before it loaded every script, so with the cache empty each script's body crosses the proxy
 * once more (EVAL after NOSCRIPT) and every EVALSHA gets its name.
 */
export async function startNamingProxy(redisPort: number): Promise<RedisProxy> {
  await run("redis-cli", ["-h", "127.0.0.1", "-p", String(redisPort), "script", "flush"]);
  return startRedisProxy(redisPort, { nameScript: scriptNamerFromDir("src/store/redis/lua") });
}

/** Per-turn averages of a counted interval. */
function perTurn(counts: ProxyCounts, turns: number) {
  return {
    commands: round(counts.commands / turns),
    roundTrips: round(counts.roundTrips / turns),
    connections: round(counts.connections / turns),
    multiBlocks: round(counts.multiBlocks / turns),
  };
}

export interface CountReport {
  idle: ReturnType<typeof perTurn>;
  sequential: ReturnType<typeof perTurn>;
  concurrent: ReturnType<typeof perTurn>;
  enqueued: ReturnType<typeof perTurn>;
  long: ReturnType<typeof perTurn>;
  /** A turn with one client tool call, answered at once (on an idle session). */
  toolTurn: ReturnType<typeof perTurn>;
  /** The same turn with one steered input joining it. */
  steeredToolTurn: ReturnType<typeof perTurn>;
  breakdownToolTurn: Record<string, number>;
  breakdownIdle: Record<string, number>;
  breakdownSequential: Record<string, number>;
  breakdownOneTurn: Record<string, number>;
  breakdownConcurrent: Record<string, number>;
  breakdownEnqueued: Record<string, number>;
}

/** Counts on a server whose Redis connections go through the proxy (no timing here). */
export async function countCommands(options: CountOptions): Promise<CountReport> {
  const { redisPort, logDir, warmup, countTurns, idleTurns, sessions, enqueued } = options;
  const proxy = await startNamingProxy(redisPort);
  const tether = await startTether(
    "redis-counted",
    {
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      // The echo model with `/tool`, for the client tool and steer counts; plain turns as before.
      TETHER_PROVIDER: "scripted-tools",
      ...options.env,
    },
    logDir,
    [],
    options.entry,
  );
  const client = turnClient(tether.address);
  try {
    // Warm-up: scripts get loaded (EVAL after NOSCRIPT), connections open, code paths JIT.
    await sequentialTurns(client, "count-seq", warmup);
    let before = proxy.snapshot();
    await sequentialTurns(client, "count-seq", countTurns, warmup);
    const seqCounts = countsBetween(before, proxy.snapshot());

    // A plain turn on an idle session: each turn's interval runs until the next one starts,
    // so the lease release and whatever else follows the stream's end are counted with it.
    await sleep(IDLE_PAUSE_MS);
    const idleStart = proxy.snapshot();
    let oneTurn = idleStart;
    for (let n = 0; n < idleTurns; n++) {
      before = proxy.snapshot();
      await runTurn(client, "count-seq", warmup + countTurns + n);
      await sleep(IDLE_PAUSE_MS);
      oneTurn = countsBetween(before, proxy.snapshot());
    }
    const idleCounts = countsBetween(idleStart, proxy.snapshot());

    // Sessions that already exist, as in steady state; then two counted turns each.
    await concurrentTurns(client, "count-conc", sessions, 1);
    before = proxy.snapshot();
    const conc = await concurrentTurns(client, "count-conc", sessions, 2);
    const concCounts = countsBetween(before, proxy.snapshot());

    await runTurn(client, "count-enq", 0);
    before = proxy.snapshot();
    await enqueuedInputs(client, "count-enq", enqueued);
    const enqCounts = countsBetween(before, proxy.snapshot());

    // The long session a timed server filled (same redis-server, same namespace).
    await runTurn(client, options.longSession, 0);
    before = proxy.snapshot();
    await sequentialTurns(client, options.longSession, LONG_COUNTED, 1);
    const longCounts = countsBetween(before, proxy.snapshot());

    // Client tool turns, then the same with a steer, each on an idle session.
    await toolTurn(client, "count-tool", 0);
    await sleep(IDLE_PAUSE_MS);
    before = proxy.snapshot();
    for (let n = 1; n <= TOOL_COUNTED; n++) {
      await toolTurn(client, "count-tool", n);
      await sleep(IDLE_PAUSE_MS);
    }
    const toolCounts = countsBetween(before, proxy.snapshot());
    before = proxy.snapshot();
    for (let n = 1; n <= TOOL_COUNTED; n++) {
      await toolTurn(client, "count-tool", TOOL_COUNTED + n, true);
      await sleep(IDLE_PAUSE_MS);
    }
    const steerCounts = countsBetween(before, proxy.snapshot());

    const perName = (counts: ProxyCounts, turns: number) =>
      Object.fromEntries(
        [...counts.byName]
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .map(([name, n]) => [name, round(n / turns)]),
      );
    return {
      idle: perTurn(idleCounts, idleTurns),
      sequential: perTurn(seqCounts, countTurns),
      concurrent: perTurn(concCounts, conc.turns),
      enqueued: perTurn(enqCounts, enqueued),
      long: perTurn(longCounts, LONG_COUNTED),
      toolTurn: perTurn(toolCounts, TOOL_COUNTED),
      steeredToolTurn: perTurn(steerCounts, TOOL_COUNTED),
      breakdownToolTurn: perName(toolCounts, TOOL_COUNTED),
      breakdownIdle: perName(idleCounts, idleTurns),
      breakdownSequential: perName(seqCounts, countTurns),
      breakdownOneTurn: perName(oneTurn, 1),
      breakdownConcurrent: perName(concCounts, conc.turns),
      breakdownEnqueued: perName(enqCounts, enqueued),
    };
  } finally {
    await tether.stop();
    await proxy.close();
  }
}
