// Redis commands and round trips per turn alone (the counting part of bench:turns, without its
// timed rounds): `npm run build && npm run bench:turns:counts`. Prints the counts as one JSON line.
// BENCH_COUNT_WEBHOOKS=false counts a server with webhooks off (TETHER_WEBHOOKS=false).
// BENCH_COUNT_CONFIG=quotas|budget|limits counts a server with webhooks off and the tenant
// quotas, the spend budget, or both of bench:turns:production (production-configs.ts).
// BENCH_COUNT_WEBHOOK_LEASE_MS sets the counted server's delivery lease (TETHER_WEBHOOK_LEASE_MS):
// a short one puts the deferred look of earlier turns' outboxes inside the counted windows.
// BENCH_COUNT_ENTRY counts another tree's built server (dist/server/main.js).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRedis } from "../../test/support/redis-harness.js";
import { countCommands } from "./counts.js";
import { sequentialTurns, turnClient } from "./workloads.js";
import { startTether } from "./server.js";
import { configEnv, type FeatureSinks } from "./production-configs.js";

/** The limits configurations send nothing anywhere: no sinks are needed. */
const NO_SINKS: FeatureSinks = { webhookUrl: "", webhookSecret: "", otlpEndpoint: "" };

/** The counted server's settings for BENCH_COUNT_CONFIG (undefined: the default server). */
function limitsEnv(config: string | undefined): Record<string, string> | undefined {
  switch (config) {
    case undefined:
    case "":
      return undefined;
    case "quotas":
    case "budget":
      return configEnv(config, NO_SINKS);
    case "limits":
      return { ...configEnv("quotas", NO_SINKS), ...configEnv("budget", NO_SINKS) };
    default:
      throw new Error(`BENCH_COUNT_CONFIG: quotas, budget or limits, not ${config}`);
  }
}

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

const limited = limitsEnv(process.env.BENCH_COUNT_CONFIG);
const logDir = await mkdtemp(join(tmpdir(), "tether-bench-counts-"));
const redis = await startRedis();
try {
  // The long session the full benchmark fills on a timed server, shorter here.
  const filler = await startTether(
    "redis-filler",
    { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}` },
    logDir,
  );
  await sequentialTurns(turnClient(filler.address), "long-redis", size("BENCH_LONG_TURNS", 300));
  await filler.stop();
  const counts = await countCommands({
    redisPort: redis.port,
    logDir,
    warmup: size("BENCH_WARMUP", 20),
    countTurns: size("BENCH_COUNT_TURNS", 50),
    idleTurns: size("BENCH_IDLE_TURNS", 20),
    sessions: size("BENCH_CONCURRENCY", 50),
    enqueued: size("BENCH_ENQUEUED", 20),
    longSession: "long-redis",
    env: {
      ...(process.env.BENCH_COUNT_WEBHOOKS === "false" && { TETHER_WEBHOOKS: "false" }),
      ...limited,
      ...(process.env.BENCH_COUNT_WEBHOOK_LEASE_MS !== undefined && {
        TETHER_WEBHOOK_LEASE_MS: process.env.BENCH_COUNT_WEBHOOK_LEASE_MS,
      }),
    },
    ...(process.env.BENCH_COUNT_ENTRY !== undefined && { entry: process.env.BENCH_COUNT_ENTRY }),
  });
  console.log(
    JSON.stringify({
      bench: "turns.counts",
      webhooks: limited === undefined && process.env.BENCH_COUNT_WEBHOOKS !== "false",
      config: process.env.BENCH_COUNT_CONFIG ?? "default",
      webhookLeaseMs: Number(process.env.BENCH_COUNT_WEBHOOK_LEASE_MS ?? 60_000),
      ...counts,
    }),
  );
} finally {
  await redis.stop();
  if (process.env.BENCH_KEEP_LOGS === "1") console.error(`logs kept in ${logDir}`);
  else await rm(logDir, { recursive: true, force: true });
}
