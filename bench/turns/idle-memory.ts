// Memory per idle session alone, for both stores: `npm run build && npm run
// bench:turns:idle-memory`. It starts the built server of the current directory (dist/), so an
// older commit is measured by extracting it (`git archive <commit> | tar -x -C <dir>`), building
// it there and running this file from that directory. Sizes: BENCH_IDLE_SESSIONS (1000).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRedis } from "../../test/support/redis-harness.js";
import { processRssBytes } from "../support/process-stats.js";
import { heapSnapshotArgs, memoryPerIdleSession } from "./resources.js";
import { startTether } from "./server.js";
import { concurrentTurns, turnClient } from "./workloads.js";

const sessions = Number(process.env.BENCH_IDLE_SESSIONS ?? 1000);
const dir = await mkdtemp(join(tmpdir(), "tether-bench-idle-memory-"));
const redis = await startRedis();
try {
  for (const store of ["memory", "redis"] as const) {
    const env: Record<string, string> =
      store === "memory"
        ? { TETHER_STORE: "memory" }
        : { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}` };
    const tether = await startTether(`idle-${store}`, env, dir, heapSnapshotArgs(dir));
    try {
      const client = turnClient(tether.address);
      // Warm-up: code paths compiled, caches and pools at their working size.
      for (let i = 0; i < 4; i++) await concurrentTurns(client, `warm-${i}`, 50, 2);
      const pid = tether.child.pid ?? 0;
      const memory = await memoryPerIdleSession(client, pid, dir, "idle", sessions);
      const rssAfterMib = Number((processRssBytes(pid) / 2 ** 20).toFixed(1));
      console.log(
        JSON.stringify({
          bench: "turns.idle_memory",
          cwd: process.cwd(),
          store,
          sessions,
          rss_bytes_per_idle_session: memory.rss_bytes,
          heap_bytes_per_idle_session: memory.heap_bytes,
          rss_after_mib: rssAfterMib,
        }),
      );
    } finally {
      await tether.stop();
    }
  }
} finally {
  await redis.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(0);
