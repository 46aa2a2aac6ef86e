// What grows in the server's heap per idle session, by V8 node type and constructor: `npm run
// build && npx tsx bench/turns/idle-heap-diff.ts`. Each store's server takes a heap snapshot after
// warm-up and another after N new sessions (one turn each, then idle); the difference per session
// is printed by type:name, largest first. TREES=<label>=<dist/server/main.js>,... compares built
// trees (an older commit extracted with `git archive` and built in a scratch directory);
// STORES=memory,redis; N (1000); TW=false turns webhooks off.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRedis } from "../../test/support/redis-harness.js";
import { heapSnapshotArgs } from "./resources.js";
import { startTether } from "./server.js";
import { concurrentTurns, turnClient } from "./workloads.js";
import { processRssBytes } from "../support/process-stats.js";

interface HeapSnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function snap(pid: number, dir: string) {
  const known = new Set(await readdir(dir));
  process.kill(pid, "SIGUSR2");
  for (;;) {
    await sleep(250);
    const f = (await readdir(dir)).find((x) => x.endsWith(".heapsnapshot") && !known.has(x));
    if (!f) continue;
    let parsed: HeapSnapshotFile;
    try {
      parsed = JSON.parse(await readFile(join(dir, f), "utf8"));
    } catch {
      continue;
    }
    await rm(join(dir, f));
    const m = parsed.snapshot.meta;
    const nf = m.node_fields.length;
    const ti = m.node_fields.indexOf("type"),
      ni = m.node_fields.indexOf("name"),
      si = m.node_fields.indexOf("self_size");
    const types = m.node_types[0];
    const agg = new Map<string, { n: number; b: number }>();
    let total = 0;
    for (let i = 0; i < parsed.nodes.length; i += nf) {
      const type = types[parsed.nodes[i + ti] ?? 0];
      let name = parsed.strings[parsed.nodes[i + ni] ?? 0];
      if (type === "string" || type === "concatenated string" || type === "sliced string")
        name = "(string)";
      else if (type === "code") name = "(code)";
      else if (type === "closure") name = "(closure) " + name;
      else if (type === "array") name = "(array) " + name;
      else if (type === "hidden") name = "(hidden) " + name;
      const k = `${type}:${String(name).slice(0, 60)}`;
      const size = parsed.nodes[i + si] ?? 0;
      total += size;
      const a = agg.get(k) ?? { n: 0, b: 0 };
      a.n++;
      a.b += size;
      agg.set(k, a);
    }
    return { agg, total, rss: processRssBytes(pid) };
  }
}
const trees = (process.env.TREES ?? "this=dist/server/main.js").split(",").map((t) => t.split("="));
const dir = await mkdtemp(join(tmpdir(), "tether-idle-heap-diff-"));
const redis = await startRedis();
const N = Number(process.env.N ?? 1000);
for (const store of (process.env.STORES ?? "memory,redis").split(",")) {
  for (const [name, entry] of trees) {
    const extra: Record<string, string> = process.env.TW ? { TETHER_WEBHOOKS: process.env.TW } : {};
    const env0: Record<string, string> =
      store === "memory"
        ? { TETHER_STORE: "memory" }
        : { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}` };
    const env = { ...env0, ...extra };
    const t = await startTether(`${name}-${store}`, env, dir, heapSnapshotArgs(dir), entry);
    const client = turnClient(t.address);
    for (let i = 0; i < 4; i++) await concurrentTurns(client, `warm-${name}-${i}`, 50, 2);
    const pid = t.child.pid!;
    await snap(pid, dir);
    const a = await snap(pid, dir);
    for (let m = 0; m < N; m += 50) await concurrentTurns(client, `idle-${name}-${m}`, 50, 1);
    await sleep(1000);
    const b = await snap(pid, dir);
    console.log(
      `== ${name} ${store}: heap ${(a.total / 2 ** 20).toFixed(1)} -> ${(b.total / 2 ** 20).toFixed(1)} MiB (${((b.total - a.total) / N).toFixed(0)} B/session), rss ${(a.rss / 2 ** 20).toFixed(0)} -> ${(b.rss / 2 ** 20).toFixed(0)} MiB`,
    );
    const rows = [...new Set([...a.agg.keys(), ...b.agg.keys()])]
      .map((k) => {
        const x = a.agg.get(k) ?? { n: 0, b: 0 },
          y = b.agg.get(k) ?? { n: 0, b: 0 };
        return { k, dn: y.n - x.n, db: y.b - x.b };
      })
      .sort((p, q) => q.db - p.db)
      .slice(0, 14);
    for (const r of rows)
      console.log(
        `${(r.db / N).toFixed(0).padStart(6)} B/s ${(r.dn / N).toFixed(2).padStart(6)} n/s  ${r.k}`,
      );
    await t.stop();
  }
}
await redis.stop();
process.exit(0);
