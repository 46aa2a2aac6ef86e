// User and system CPU and read/write system calls per turn of built servers (/proc/<pid>/stat
// and /proc/<pid>/io), for the socket writes of the Redis path: `npm run build && npx tsx
// bench/turns/store-syscalls.ts`. TREES=<label>=<dist/server/main.js>,... compares built trees in
// the same rounds (the order reversing every round); STORES=memory,redis; ROUNDS (4).
import { mkdtemp } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRedis } from "../../test/support/redis-harness.js";
import { startTether } from "./server.js";
import { concurrentTurns, sequentialTurns, turnClient } from "./workloads.js";

const trees = (process.env.TREES ?? "this=dist/server/main.js").split(",").map((t) => t.split("="));
const stat = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const io = readFileSync(`/proc/${pid}/io`, "utf8");
  const g = (n: string) => Number(new RegExp(`^${n}: (\\d+)`, "mu").exec(io)?.[1]);
  return { u: Number(f[11]) * 10, s: Number(f[12]) * 10, r: g("syscr"), w: g("syscw") };
};
const logDir = await mkdtemp(join(tmpdir(), "tether-store-syscalls-"));
const subjects = [];
for (const [name, entry] of trees) {
  for (const store of (process.env.STORES ?? "memory,redis").split(",")) {
    let env: Record<string, string> = { TETHER_STORE: "memory" };
    if (store === "redis") {
      const redis = await startRedis();
      env = { TETHER_STORE: "redis", TETHER_REDIS_URL: `redis://127.0.0.1:${redis.port}` };
    }
    const server = await startTether(`${name}-${store}`, env, logDir, [], entry);
    const client = turnClient(server.address);
    await sequentialTurns(client, "w", 20);
    await concurrentTurns(client, "w", 50, 1);
    subjects.push({
      label: `${name}.${store}`,
      server,
      client,
      acc: new Map<number, { u: number; s: number; r: number; w: number; t: number }>(),
    });
  }
}
const rounds = Number(process.env.ROUNDS ?? 4);
for (let r = 0; r < rounds; r++) {
  for (const c of [50, 200]) {
    for (const s of r % 2 ? [...subjects].reverse() : subjects) {
      const pid = s.server.child.pid!;
      const a = stat(pid);
      const res = await concurrentTurns(s.client, `c${c}-${r}`, c, 4);
      const b = stat(pid);
      const acc = s.acc.get(c) ?? { u: 0, s: 0, r: 0, w: 0, t: 0 };
      s.acc.set(c, {
        u: acc.u + b.u - a.u,
        s: acc.s + b.s - a.s,
        r: acc.r + b.r - a.r,
        w: acc.w + b.w - a.w,
        t: acc.t + res.turns,
      });
    }
  }
}
for (const s of subjects) {
  for (const [c, a] of s.acc) {
    console.log(
      `${s.label} c${c}: user ${(a.u / a.t).toFixed(3)} sys ${(a.s / a.t).toFixed(3)} ms/turn; read syscalls ${(a.r / a.t).toFixed(1)} write syscalls ${(a.w / a.t).toFixed(1)} per turn`,
    );
  }
  await s.server.stop();
}
process.exit(0);
