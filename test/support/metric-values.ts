// Reads one series of a prom-client registry: the value of `name` (a histogram's
// `_bucket`/`_sum`/`_count` included) whose labels include every pair of `labels`, summed.
import type { Registry } from "prom-client";

/** One sample as prom-client's get() gives it (histograms name their bucket, sum and count). */
interface Sample {
  value: number;
  labels: Record<string, string | number | undefined>;
  metricName?: string;
}

export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string | number> = {},
): Promise<number> {
  const base = name.replace(/_(bucket|sum|count)$/u, "");
  const metric = registry.getSingleMetric(base) ?? registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = (await metric.get()) as { values: Sample[] };
  const wanted = Object.entries(labels);
  return values
    .filter((v) => (v.metricName ?? base) === name)
    .filter((v) => wanted.every(([k, want]) => String(v.labels[k]) === String(want)))
    .reduce((sum, v) => sum + v.value, 0);
}

/** The label sets `name` has series for (histograms: of their `_count`). */
export async function metricLabelSets(
  registry: Registry,
  name: string,
): Promise<Record<string, string | number>[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = (await metric.get()) as { values: Sample[] };
  const histogram = values.some((v) => v.metricName === `${name}_count`);
  return values
    .filter((v) => !histogram || v.metricName === `${name}_count`)
    .map((v) => ({ ...v.labels }) as Record<string, string | number>);
}

/** One sample of the Prometheus text format. */
export interface ScrapedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a /metrics body (label values without escapes, as Tether's are). */
export function parseExposition(body: string): ScrapedSample[] {
  const samples: ScrapedSample[] = [];
  for (const line of body.split("\n")) {
    const match = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$/u.exec(line);
    if (!match?.[1] || match[3] === undefined) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([A-Za-z_][A-Za-z0-9_]*)="([^"]*)"/gu)) {
      labels[pair[1] ?? ""] = pair[2] ?? "";
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The metric families a /metrics body declares (its `# TYPE` lines). */
export function declaredMetrics(body: string): Set<string> {
  return new Set([...body.matchAll(/^# TYPE (\S+) /gmu)].map((m) => m[1] ?? ""));
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function scraped(
  samples: readonly ScrapedSample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples
    .filter((s) => s.name === name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
