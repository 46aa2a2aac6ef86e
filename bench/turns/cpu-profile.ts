// Reads a V8 .cpuprofile (node --cpu-prof) and sums each function's self time: the time of the
// samples taken while that function was on top of the stack, by function name and location.
import { readFileSync } from "node:fs";
import { relative } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  fn: string;
  ms: number;
  /** Share of the profile's sampled time, idle excluded. */
  share: number;
}

function label(frame: ProfileNode["callFrame"]): string {
  const name = frame.functionName || "(anonymous)";
  if (!frame.url) return name;
  const file = frame.url.startsWith("file://")
    ? relative(process.cwd(), new URL(frame.url).pathname)
    : frame.url;
  return `${name} ${file}:${frame.lineNumber + 1}`;
}

/** Each function's self time (µs) and the profile's sampled busy time, idle left out. */
export function selfTimeByFunction(path: string): { us: Map<string, number>; busyUs: number } {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const labels = new Map(profile.nodes.map((n) => [n.id, label(n.callFrame)]));
  const us = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const name = labels.get(id) ?? "?";
    if (name === "(idle)") return;
    // timeDeltas[i] is the time since the previous sample, in microseconds.
    const delta = profile.timeDeltas[i] ?? 0;
    busyUs += delta;
    us.set(name, (us.get(name) ?? 0) + delta);
  });
  return { us, busyUs };
}

/** The `top` functions by self time, idle time left out. */
export function topSelfTime(path: string, top = 10): SelfTime[] {
  const { us, busyUs } = selfTimeByFunction(path);
  return [...us]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, t]) => ({
      fn,
      ms: Number((t / 1000).toFixed(1)),
      share: Number((t / busyUs).toFixed(3)),
    }));
}
