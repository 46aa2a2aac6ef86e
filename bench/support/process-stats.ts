// CPU time and resident memory of other processes, read the way `ps` does: a built server's
// from /proc (Linux), and a redis-server's own from `INFO cpu`. Benchmarks take a reading
// before and after a workload and divide the difference by the turns it ran.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);
/** Clock ticks per second of /proc's utime and stime (`getconf CLK_TCK`: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User + system CPU of a process and all its threads so far, in ms (10 ms resolution). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis
  // start at field 3 (state), so utime (14) and stime (15) are at 11 and 12.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Resident set size of a process, in bytes. */
export function processRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+)\s+kB/mu.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

/** The redis-server's own CPU so far (used_cpu_sys + used_cpu_user of `INFO cpu`), in ms. */
export async function redisCpuMs(port: number): Promise<number> {
  const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "info", "cpu"]);
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "mu").exec(stdout)?.[1]);
  const seconds = field("used_cpu_sys") + field("used_cpu_user");
  if (!Number.isFinite(seconds)) throw new Error(`no used_cpu in INFO cpu of redis on ${port}`);
  return seconds * 1000;
}
