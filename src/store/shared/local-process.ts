// Local-process liveness on Linux: host id, boot id and process start time read from /proc.
// Where /proc is not there, owners are `opaque` and never provably dead.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { LeaseOwner, LeaseOwnerLiveness } from "../../domain/lease.js";
import type { LivenessProbe } from "../../ports/liveness-probe.js";

function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Field 22 of /proc/<pid>/stat: start time in clock ticks since boot. The command name (field 2)
 * may hold spaces and parentheses, so parsing starts after its last ')'.
 */
export function processStartTime(pid: number): string | undefined {
  const stat = readTrimmed(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[19];
}

export function currentLiveness(): LeaseOwnerLiveness {
  const bootId = readTrimmed("/proc/sys/kernel/random/boot_id");
  const processStart = processStartTime(process.pid);
  if (!bootId || !processStart) return { kind: "opaque" };
  const hostId = readTrimmed("/etc/machine-id") ?? hostname();
  return { kind: "local_process", hostId, bootId, pid: process.pid, processStart };
}

export function createProcLivenessProbe(): LivenessProbe {
  return {
    isProvablyDead(holder: LeaseOwner, claimant: LeaseOwner): boolean {
      const h = holder.liveness;
      const c = claimant.liveness;
      if (h.kind !== "local_process" || c.kind !== "local_process") return false;
      if (h.hostId !== c.hostId || h.bootId !== c.bootId) return false;
      // Dead when no process has that pid, or the pid now belongs to a later process.
      return processStartTime(h.pid) !== h.processStart;
    },
  };
}
