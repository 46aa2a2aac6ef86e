// The deferred look (ADR 0021 "The hint dropped in the settle"): Redis commands a lease after a
// workload of webhook-writing turns, per session. `npm run build && npm run bench:turns:look`.
// A server with a short delivery lease (BENCH_LOOK_LEASE_MS, 3 s) behind the counting proxy
// runs one turn on each of BENCH_LOOK_SESSIONS fresh sessions (no endpoint: each turn's event is
// settled without a request). Counted: a quiet window first (polls, renewals: the background),
// then the workload and its deliveries, then the window that holds the look a lease after it
// (from the workload's end plus a second to a lease plus three polls later). The look's
// commands per session are that window's minus the quiet window's of the same length. Then one
// session's turns more than a lease apart (BENCH_LOOK_SPACED_TURNS, 5): commands per turn by
// name, and their sum without the names the quiet window counted (the background's: the polls,
// the schedule reads, the renewals; the webhook poll's ZRANGEBYSCORE among them).
// BENCH_LOOK_ENTRY: another tree's dist/server/main.js (a before/after run).
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startRedis } from "../../test/support/redis-harness.js";
import { countsBetween, type ProxyCounts } from "../support/redis-proxy.js";
import { startNamingProxy } from "./counts.js";
import { startTether } from "./server.js";
import { runTurn, turnClient } from "./workloads.js";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const round = (x: number) => Number(x.toFixed(2));

const leaseMs = size("BENCH_LOOK_LEASE_MS", 3_000);
const pollMs = 500;
const sessions = size("BENCH_LOOK_SESSIONS", 50);
const spacedTurns = size("BENCH_LOOK_SPACED_TURNS", 5);
/** After the workload: its deliveries and settles are done well within this. */
const SETTLED_MS = 1_000;
/** The look window: from SETTLED_MS to a lease plus three polls after the workload's end. */
const windowMs = leaseMs + 3 * pollMs - SETTLED_MS;

const perSession = (counts: ProxyCounts) =>
  Object.fromEntries(
    [...counts.byName]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([name, n]) => [name, round(n / sessions)]),
  );

const logDir = await mkdtemp(join(tmpdir(), "tether-bench-look-"));
const redis = await startRedis();
const proxy = await startNamingProxy(redis.port);
const hinted = async () =>
  Number(
    (
      await run("redis-cli", ["-p", String(redis.port), "zcard", "tether:webhooks:due"])
    ).stdout.trim(),
  );
try {
  const tether = await startTether(
    "redis-look",
    {
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      TETHER_WEBHOOK_LEASE_MS: String(leaseMs),
      TETHER_WEBHOOK_POLL_MS: String(pollMs),
    },
    logDir,
    [],
    process.env.BENCH_LOOK_ENTRY,
  );
  const client = turnClient(tether.address);
  try {
    // Warm-up, then its own look (a lease later) passes before anything is counted.
    for (let n = 0; n < 5; n++) await runTurn(client, "look-warm", n);
    await sleep(leaseMs + 3 * pollMs);
    let before = proxy.snapshot();
    await sleep(windowMs);
    const quiet = countsBetween(before, proxy.snapshot());

    before = proxy.snapshot();
    for (let s = 0; s < sessions; s++) await runTurn(client, `look-${s}`, 0);
    await sleep(SETTLED_MS);
    const turns = countsBetween(before, proxy.snapshot());
    const hintedAfterTurns = await hinted();

    before = proxy.snapshot();
    await sleep(windowMs);
    const look = countsBetween(before, proxy.snapshot());
    const hintedAfterLook = await hinted();

    // One session, each turn a lease and three polls after the last: its look (if any) counted.
    before = proxy.snapshot();
    for (let n = 0; n < spacedTurns; n++) {
      await runTurn(client, "look-spaced", n);
      await sleep(leaseMs + 3 * pollMs);
    }
    const spaced = countsBetween(before, proxy.snapshot());
    const ownNames = [...spaced.byName].filter(([name]) => !quiet.byName.has(name));
    const spacedOwn = ownNames.reduce((sum, [, n]) => sum + n, 0);

    console.log(
      JSON.stringify({
        bench: "turns.deferred-look",
        leaseMs,
        sessions,
        windowMs,
        loadavg: loadavg().map(round),
        turnCommandsPerSession: round(turns.commands / sessions),
        hintedAfterTurns,
        hintedAfterLook,
        lookCommandsPerSession: round((look.commands - quiet.commands) / sessions),
        lookRoundTripsPerSession: round((look.roundTrips - quiet.roundTrips) / sessions),
        quietCommands: quiet.commands,
        lookWindowCommands: look.commands,
        spacedTurns,
        spacedCommandsPerTurn: round(spacedOwn / spacedTurns),
        breakdownSpaced: Object.fromEntries(
          [...spaced.byName].map(([name, n]) => [name, round(n / spacedTurns)]),
        ),
        breakdownLook: perSession(look),
        breakdownQuiet: perSession(quiet),
        breakdownTurns: perSession(turns),
      }),
    );
  } finally {
    await tether.stop();
  }
} finally {
  await proxy.close();
  await redis.stop();
  await rm(logDir, { recursive: true, force: true });
}
