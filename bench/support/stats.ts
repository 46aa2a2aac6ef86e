// Latency statistics and output helpers shared by the benchmarks.

export interface RunStats {
  ops: number;
  seconds: number;
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export function percentile(sortedMs: readonly number[], p: number): number {
  if (sortedMs.length === 0) return 0;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)] ?? 0;
}

export function summarize(latenciesMs: number[], seconds: number): RunStats {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    ops: sorted.length,
    seconds,
    opsPerSecond: sorted.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
  };
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight; returns latencies. */
export async function runConcurrently(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<{ latenciesMs: number[]; seconds: number }> {
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  async function lane(): Promise<void> {
    while (next < count) {
      const i = next++;
      const t0 = performance.now();
      await task(i);
      latenciesMs.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return { latenciesMs, seconds: (performance.now() - started) / 1000 };
}

export function printTable(rows: Record<string, string | number>[]): void {
  const first = rows[0];
  if (!first) return;
  const headers = Object.keys(first);
  const cell = (v: string | number) => (typeof v === "number" ? v.toFixed(v >= 100 ? 0 : 2) : v);
  const widths = headers.map((h) =>
    Math.max(h.length, ...rows.map((r) => String(cell(r[h] ?? "")).length)),
  );
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join("  ");
  console.log(line(headers));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const row of rows) console.log(line(headers.map((h) => String(cell(row[h] ?? "")))));
}
